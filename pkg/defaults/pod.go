package defaults

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// apparmorAnnotationPrefix is the deprecated per-container AppArmor
// annotation's.
const apparmorAnnotationPrefix = "container.apparmor.security.beta.kubernetes.io/"

// podCreated is the Pod strategy's PrepareForCreate, on the Pod that
// admission left: its status starts afresh (Pending, its QoS class, the
// condition of a Pod whose scheduling is gated); what depends on feature
// gates or the time (pod-level resources' defaults, selectors merged from
// matchLabelKeys, the AppArmor annotations' fields, a condition's time)
// is returned as unknown.
func podCreated(obj map[string]any) []fieldpath.Path {
	status := map[string]any{"phase": string(corev1.PodPending)}
	obj["status"] = status
	var unknown []fieldpath.Path
	var pod corev1.Pod
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj, &pod); err != nil {
		return []fieldpath.Path{fieldpath.MakePathOrDie("status", "qosClass")}
	}
	if len(pod.Spec.SchedulingGates) > 0 {
		// applySchedulingGatedCondition, stamped with the time.
		status["conditions"] = []any{map[string]any{
			"type": string(corev1.PodScheduled), "status": string(corev1.ConditionFalse),
			"reason": corev1.PodReasonSchedulingGated, "message": "Scheduling is blocked due to non-empty scheduling gates",
			"lastProbeTime": nil,
		}}
		unknown = append(unknown, fieldpath.MakePathOrDie("status", "conditions", fieldpath.KeyByFields("type", string(corev1.PodScheduled)), "lastTransitionTime"))
	}
	if pod.Spec.Resources != nil {
		// Pod-level resources: their defaults and the QoS class they
		// make depend on feature gates.
		unknown = append(unknown, fieldpath.MakePathOrDie("spec", "resources"), fieldpath.MakePathOrDie("status", "qosClass"))
	} else {
		status["qosClass"] = string(podQOS(&pod))
	}
	if a := pod.Spec.Affinity; a != nil {
		// mutatePodAffinity merges matchLabelKeys into the selectors.
		type terms struct {
			name      string
			required  []corev1.PodAffinityTerm
			preferred []corev1.WeightedPodAffinityTerm
		}
		var all []terms
		if pa := a.PodAffinity; pa != nil {
			all = append(all, terms{"podAffinity", pa.RequiredDuringSchedulingIgnoredDuringExecution, pa.PreferredDuringSchedulingIgnoredDuringExecution})
		}
		if pa := a.PodAntiAffinity; pa != nil {
			all = append(all, terms{"podAntiAffinity", pa.RequiredDuringSchedulingIgnoredDuringExecution, pa.PreferredDuringSchedulingIgnoredDuringExecution})
		}
		for _, t := range all {
			preferred := make([]corev1.PodAffinityTerm, len(t.preferred))
			for i, w := range t.preferred {
				preferred[i] = w.PodAffinityTerm
			}
			for field, list := range map[string][]corev1.PodAffinityTerm{"requiredDuringSchedulingIgnoredDuringExecution": t.required, "preferredDuringSchedulingIgnoredDuringExecution": preferred} {
				for _, term := range list {
					if len(term.MatchLabelKeys)+len(term.MismatchLabelKeys) > 0 {
						unknown = append(unknown, fieldpath.MakePathOrDie("spec", "affinity", t.name, field))
						break
					}
				}
			}
		}
	}
	for _, c := range pod.Spec.TopologySpreadConstraints {
		if len(c.MatchLabelKeys) > 0 {
			unknown = append(unknown, fieldpath.MakePathOrDie("spec", "topologySpreadConstraints"))
			break
		}
	}
	for k := range pod.Annotations {
		if name, ok := strings.CutPrefix(k, apparmorAnnotationPrefix); ok {
			// applyAppArmorVersionSkew copies the annotation to the field.
			for field, cs := range map[string][]corev1.Container{"containers": pod.Spec.Containers, "initContainers": pod.Spec.InitContainers} {
				for _, c := range cs {
					if c.Name == name {
						unknown = append(unknown, fieldpath.MakePathOrDie("spec", field, fieldpath.KeyByFields("name", name), "securityContext", "appArmorProfile"))
					}
				}
			}
		}
	}
	return unknown
}

// podQOS is qos.ComputePodQOS for a Pod without pod-level resources: the
// QoS of cpu and memory in each container and init container.
func podQOS(pod *corev1.Pod) corev1.PodQOSClass {
	var qos corev1.PodQOSClass
	for _, c := range append(append([]corev1.Container{}, pod.Spec.InitContainers...), pod.Spec.Containers...) {
		cq := requirementsQOS(c.Resources)
		switch {
		case cq == corev1.PodQOSBurstable:
			return cq
		case qos == "":
			qos = cq
		case qos != cq:
			return corev1.PodQOSBurstable
		}
	}
	if qos == "" {
		return corev1.PodQOSBestEffort
	}
	return qos
}

func requirementsQOS(r corev1.ResourceRequirements) corev1.PodQOSClass {
	if len(r.Requests) == 0 && len(r.Limits) == 0 {
		return corev1.PodQOSBestEffort
	}
	var qos corev1.PodQOSClass
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		req, lim := r.Requests[name], r.Limits[name]
		var rq corev1.PodQOSClass
		switch {
		case !req.Equal(lim):
			return corev1.PodQOSBurstable
		case req.IsZero():
			rq = corev1.PodQOSBestEffort
		default:
			rq = corev1.PodQOSGuaranteed
		}
		if qos == "" {
			qos = rq
		} else if qos != rq {
			return corev1.PodQOSBurstable
		}
	}
	return qos
}
