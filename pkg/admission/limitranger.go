package admission

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
)

// LimitRanger's checks, as plugin/pkg/admission/limitranger writes them
// (its functions keep their shapes, so that they read side by side).

// validateLimits is LimitRanger's validation of the Pod its mutation and
// the other plugins left: each LimitRange's min, max and max
// limit/request ratio, of each container and of the Pod.
func (m *podModel) validateLimits() *v1alpha1.AdmissionStep {
	if _, unread := m.reads.Unread[limitRanger]; unread {
		return &v1alpha1.AdmissionStep{Kind: v1alpha1.BuiltinPlugin, Name: limitRanger, Effect: v1alpha1.EffectMayDeny, Caveats: []string{m.reads.Unread[limitRanger] + ": its min, max and ratio were not checked"}}
	}
	if len(m.reads.LimitRanges) == 0 {
		return nil
	}
	var pod corev1.Pod
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m.pod, &pod); err != nil {
		return &v1alpha1.AdmissionStep{Kind: v1alpha1.BuiltinPlugin, Name: limitRanger, Effect: v1alpha1.EffectMayDeny, Caveats: []string{"the Pod could not be read to check its LimitRanges: " + err.Error()}}
	}
	var failing []string
	for _, u := range sorted(m.reads.LimitRanges) {
		var lr corev1.LimitRange
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &lr); err != nil {
			return &v1alpha1.AdmissionStep{Kind: v1alpha1.BuiltinPlugin, Name: limitRanger, Effect: v1alpha1.EffectMayDeny, Caveats: []string{fmt.Sprintf("LimitRange %s could not be read: %v", u.GetName(), err)}}
		}
		if msg := podLimitErrors(&lr, &pod); msg != "" {
			failing = append(failing, msg)
		}
	}
	if len(failing) == 0 {
		return nil
	}
	s := &v1alpha1.AdmissionStep{Kind: v1alpha1.BuiltinPlugin, Name: limitRanger, Effect: v1alpha1.EffectDenies, Message: m.forbidden("%s", failing[0])}
	if len(failing) > 1 {
		s.Caveats = []string{fmt.Sprintf("%d LimitRanges refuse the Pod: the apiserver names the first it reads, in no fixed order", len(failing))}
	}
	return s
}

// podLimitErrors is PodValidateLimitFunc, its errors aggregated as the
// apiserver does ("": none). A LimitRange's resources are a map: several
// errors are in the order of their names here, in no fixed order there.
func podLimitErrors(lr *corev1.LimitRange, pod *corev1.Pod) string {
	var errs []error
	check := func(limitType string, min, max, ratio corev1.ResourceList, requests, limits corev1.ResourceList) {
		for _, k := range resourceNames(min) {
			if err := minConstraint(limitType, string(k), min[k], requests, limits); err != nil {
				errs = append(errs, err)
			}
		}
		for _, k := range resourceNames(max) {
			if err := maxConstraint(limitType, string(k), max[k], requests, limits); err != nil {
				errs = append(errs, err)
			}
		}
		for _, k := range resourceNames(ratio) {
			if err := ratioConstraint(limitType, string(k), ratio[k], requests, limits); err != nil {
				errs = append(errs, err)
			}
		}
	}
	for _, limit := range lr.Spec.Limits {
		switch limit.Type {
		case corev1.LimitTypeContainer:
			for _, cs := range [][]corev1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
				for _, c := range cs {
					check(string(limit.Type), limit.Min, limit.Max, limit.MaxLimitRequestRatio, c.Resources.Requests, c.Resources.Limits)
				}
			}
		case corev1.LimitTypePod:
			check(string(limit.Type), limit.Min, limit.Max, limit.MaxLimitRequestRatio, podResources(pod, true), podResources(pod, false))
		}
	}
	if len(errs) == 0 {
		return ""
	}
	return aggregate(errs)
}

// aggregate is utilerrors.NewAggregate(errs).Error(): one error as it is,
// several, without repeats, in brackets.
func aggregate(errs []error) string {
	if len(errs) == 1 {
		return errs[0].Error()
	}
	seen := map[string]bool{}
	var msgs []string
	for _, e := range errs {
		if !seen[e.Error()] {
			seen[e.Error()] = true
			msgs = append(msgs, e.Error())
		}
	}
	if len(msgs) == 1 {
		return msgs[0]
	}
	return "[" + strings.Join(msgs, ", ") + "]"
}

func resourceNames(l corev1.ResourceList) []corev1.ResourceName {
	out := make([]corev1.ResourceName, 0, len(l))
	for k := range l {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// enforcedValues is requestLimitEnforcedValues: milli-units when they
// don't overflow.
func enforcedValues(request, limit, enforced resource.Quantity) (int64, int64, int64) {
	r, l, e := request.Value(), limit.Value(), enforced.Value()
	if r <= resource.MaxMilliValue && l <= resource.MaxMilliValue && e <= resource.MaxMilliValue {
		r, l, e = request.MilliValue(), limit.MilliValue(), enforced.MilliValue()
	}
	return r, l, e
}

func minConstraint(limitType, name string, enforced resource.Quantity, requests, limits corev1.ResourceList) error {
	req, hasReq := requests[corev1.ResourceName(name)]
	lim, hasLim := limits[corev1.ResourceName(name)]
	r, l, e := enforcedValues(req, lim, enforced)
	switch {
	case !hasReq:
		return fmt.Errorf("minimum %s usage per %s is %s.  No request is specified", name, limitType, enforced.String())
	case r < e:
		return fmt.Errorf("minimum %s usage per %s is %s, but request is %s", name, limitType, enforced.String(), req.String())
	case hasLim && l < e:
		return fmt.Errorf("minimum %s usage per %s is %s, but limit is %s", name, limitType, enforced.String(), lim.String())
	}
	return nil
}

func maxConstraint(limitType, name string, enforced resource.Quantity, requests, limits corev1.ResourceList) error {
	req, hasReq := requests[corev1.ResourceName(name)]
	lim, hasLim := limits[corev1.ResourceName(name)]
	r, l, e := enforcedValues(req, lim, enforced)
	switch {
	case !hasLim:
		return fmt.Errorf("maximum %s usage per %s is %s.  No limit is specified", name, limitType, enforced.String())
	case l > e:
		return fmt.Errorf("maximum %s usage per %s is %s, but limit is %s", name, limitType, enforced.String(), lim.String())
	case hasReq && r > e:
		return fmt.Errorf("maximum %s usage per %s is %s, but request is %s", name, limitType, enforced.String(), req.String())
	}
	return nil
}

func ratioConstraint(limitType, name string, enforced resource.Quantity, requests, limits corev1.ResourceList) error {
	req, hasReq := requests[corev1.ResourceName(name)]
	lim, hasLim := limits[corev1.ResourceName(name)]
	r, l, _ := enforcedValues(req, lim, enforced)
	if !hasReq || r == 0 {
		return fmt.Errorf("%s max limit to request ratio per %s is %s, but no request is specified or request is 0", name, limitType, enforced.String())
	}
	if !hasLim || l == 0 {
		return fmt.Errorf("%s max limit to request ratio per %s is %s, but no limit is specified or limit is 0", name, limitType, enforced.String())
	}
	observed := float64(l) / float64(r)
	shown := observed
	maxRatio := float64(enforced.Value())
	if enforced.Value() <= resource.MaxMilliValue {
		observed *= 1000
		maxRatio = float64(enforced.MilliValue())
	}
	if observed > maxRatio {
		return fmt.Errorf("%s max limit to request ratio per %s is %s, but provided ratio is %f", name, limitType, enforced.String(), shown)
	}
	return nil
}

// podResources are the Pod's requests (or limits) as LimitRanger sums
// them (podRequests, podLimits): its containers and sidecars added up,
// the largest init container's need if larger, and pod-level resources
// (PodLevelResources, on by default) in place of the sum for cpu and
// memory.
func podResources(pod *corev1.Pod, requests bool) corev1.ResourceList {
	of := func(c corev1.Container) corev1.ResourceList {
		if requests {
			return c.Resources.Requests
		}
		return c.Resources.Limits
	}
	sum := corev1.ResourceList{}
	for _, c := range pod.Spec.Containers {
		addResources(sum, of(c))
	}
	sidecars, inits := corev1.ResourceList{}, corev1.ResourceList{}
	for _, c := range pod.Spec.InitContainers {
		need := of(c)
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			addResources(sum, need)
			addResources(sidecars, need)
			need = sidecars
		} else {
			tmp := corev1.ResourceList{}
			addResources(tmp, need)
			addResources(tmp, sidecars)
			need = tmp
		}
		maxResources(inits, need)
	}
	maxResources(sum, inits)
	if pod.Spec.Resources != nil {
		podLevel := pod.Spec.Resources.Limits
		if requests {
			podLevel = pod.Spec.Resources.Requests
		}
		for _, k := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			if q, ok := podLevel[k]; ok {
				sum[k] = q
			}
		}
	}
	return sum
}

func addResources(list, add corev1.ResourceList) {
	for k, q := range add {
		if v, ok := list[k]; ok {
			v.Add(q)
			list[k] = v
		} else {
			list[k] = q.DeepCopy()
		}
	}
}

func maxResources(list, other corev1.ResourceList) {
	for k, q := range other {
		if v, ok := list[k]; !ok || q.Cmp(v) > 0 {
			list[k] = q.DeepCopy()
		}
	}
}
