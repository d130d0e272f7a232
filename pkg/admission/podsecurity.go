package admission

import (
	"fmt"
	"reflect"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	psapi "k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/defaults"
)

// PodSecurity is the built-in PodSecurity admission, evaluated with its
// own library (k8s.io/pod-security-admission) against the namespace's
// pod-security.kubernetes.io labels: a Pod that violates the enforced
// level is denied, and every object with a pod template that violates the
// warned level gets the server's warning. The cluster's own default levels
// and exemptions (the admission configuration file) can't be read: the
// built-in defaults (privileged, no exemptions) are assumed.
const podSecurity = "PodSecurity"

// podSecurityKinds are the kinds whose pod template PodSecurity checks
// (pod-security-admission's DefaultPodSpecExtractor), by resource.
var podSecurityKinds = map[schema.GroupResource]string{
	{Resource: "podtemplates"}:                "PodTemplate",
	{Resource: "replicationcontrollers"}:      "ReplicationController",
	{Group: "apps", Resource: "replicasets"}:  "ReplicaSet",
	{Group: "apps", Resource: "deployments"}:  "Deployment",
	{Group: "apps", Resource: "daemonsets"}:   "DaemonSet",
	{Group: "apps", Resource: "statefulsets"}: "StatefulSet",
	{Group: "batch", Resource: "jobs"}:        "Job",
	{Group: "batch", Resource: "cronjobs"}:    "CronJob",
}

// podTemplatePath is where a kind of podSecurityKinds keeps its pod
// template: the parent of its pod spec (defaults.PodSpecPath).
func podTemplatePath(gr schema.GroupResource) []string {
	spec := defaults.PodSpecPath(gr.Group, podSecurityKinds[gr])
	return spec[:len(spec)-1]
}

var pods = schema.GroupResource{Resource: "pods"}

// PodSecurityChecks tells whether PodSecurity looks at objects of gr (so
// that the caller reads the namespace's labels).
func PodSecurityChecks(gr schema.GroupResource) bool {
	_, ok := podSecurityKinds[gr]
	return ok || gr == pods
}

var (
	evaluatorsMu sync.Mutex
	evaluators   = map[int]policy.Evaluator{}
)

// evaluator is the library's evaluator as a server of minor emulates it
// ("latest" is that minor); 0: the library's own latest.
func evaluator(minor int) (policy.Evaluator, error) {
	evaluatorsMu.Lock()
	defer evaluatorsMu.Unlock()
	if e, ok := evaluators[minor]; ok {
		return e, nil
	}
	var v *psapi.Version
	if minor > 0 {
		mv := psapi.MajorMinorVersion(1, minor)
		v = &mv
	}
	e, err := policy.NewEvaluator(policy.DefaultChecks(), v)
	if err != nil {
		return nil, err
	}
	evaluators[minor] = e
	return e, nil
}

var namespaces = schema.GroupResource{Resource: "namespaces"}

// privileged is PodSecurity's built-in default policy.
var privileged = psapi.Policy{
	Enforce: psapi.LevelVersion{Level: psapi.LevelPrivileged, Version: psapi.LatestVersion()},
	Audit:   psapi.LevelVersion{Level: psapi.LevelPrivileged, Version: psapi.LatestVersion()},
	Warn:    psapi.LevelVersion{Level: psapi.LevelPrivileged, Version: psapi.LatestVersion()},
}

// namespaceStep is PodSecurity's check of a Namespace's own labels
// (ValidateNamespace): invalid levels or versions are refused on create,
// and on update when they changed; a stricter enforce level makes the
// server check the namespace's pods and warn about them.
func namespaceStep(req Request) *v1alpha1.AdmissionStep {
	if req.Subresource != "" {
		return nil
	}
	newPolicy, newErrs := psapi.PolicyToEvaluate(req.Object.GetLabels(), privileged)
	if len(newErrs) > 0 {
		changed := true
		if req.Old != nil {
			_, oldErrs := psapi.PolicyToEvaluate(req.Old.GetLabels(), privileged)
			changed = len(oldErrs) == 0 || !reflect.DeepEqual(newErrs, oldErrs)
		}
		if changed {
			msg := apierrors.NewInvalid(schema.GroupKind{Kind: "Namespace"}, req.Object.GetName(), newErrs).Error()
			return &v1alpha1.AdmissionStep{Kind: v1alpha1.BuiltinPlugin, Name: podSecurity, Effect: v1alpha1.EffectDenies, Message: msg}
		}
		return nil
	}
	if req.Old == nil {
		return nil
	}
	oldPolicy, _ := psapi.PolicyToEvaluate(req.Old.GetLabels(), privileged)
	if newPolicy.Enforce == oldPolicy.Enforce || newPolicy.Enforce.Level == psapi.LevelPrivileged {
		return nil
	}
	return &v1alpha1.AdmissionStep{Kind: v1alpha1.BuiltinPlugin, Name: podSecurity, Effect: v1alpha1.EffectMayWarn,
		Caveats: []string{fmt.Sprintf("the enforce level becomes %q: the server checks the namespace's pods against it and warns about those that violate it (not evaluated here)", newPolicy.Enforce.String())}}
}

// podSecurityStep evaluates req as PodSecurity admission does; nil when it
// lets the request through without a word.
func podSecurityStep(req Request) *v1alpha1.AdmissionStep {
	gr := req.Resource.GroupResource()
	if gr == namespaces {
		return namespaceStep(req)
	}
	if req.Subresource != "" || !PodSecurityChecks(gr) {
		return nil
	}
	if req.NamespaceUnknown {
		effect := v1alpha1.EffectMayWarn
		if gr == pods {
			effect = v1alpha1.EffectMayDeny
		}
		return &v1alpha1.AdmissionStep{Kind: v1alpha1.BuiltinPlugin, Name: podSecurity, Effect: effect,
			Caveats: []string{"the namespace's labels could not be read (get namespaces): PodSecurity was not evaluated"}}
	}
	nsPolicy, errs := psapi.PolicyToEvaluate(req.NamespaceLabels, privileged)
	if len(errs) > 0 {
		return nil
	}
	var template any = req.Object.Object
	enforce := gr == pods
	if !enforce {
		t, found, _ := unstructured.NestedFieldNoCopy(req.Object.Object, podTemplatePath(gr)...)
		if !found || t == nil {
			return nil // no template: nothing to check
		}
		template = t
	}
	switch {
	case enforce && nsPolicy.FullyPrivileged():
		return nil
	case !enforce && nsPolicy.Warn.Level == psapi.LevelPrivileged && nsPolicy.Audit.Level == psapi.LevelPrivileged:
		return nil
	}
	var pod corev1.PodTemplateSpec
	m, _ := template.(map[string]any)
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, &pod); err != nil {
		return &v1alpha1.AdmissionStep{Kind: v1alpha1.BuiltinPlugin, Name: podSecurity, Effect: v1alpha1.EffectMayDeny, Caveats: []string{"the pod template could not be read: " + err.Error()}}
	}
	if enforce && req.Old != nil {
		var old corev1.PodTemplateSpec
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(req.Old.Object, &old); err == nil && !significantPodUpdate(&pod.Spec, &old.Spec) {
			return nil // PodSecurity re-checks a Pod's update only when its images change
		}
	}
	e, err := evaluator(req.ServerMinor)
	if err != nil {
		return &v1alpha1.AdmissionStep{Kind: v1alpha1.BuiltinPlugin, Name: podSecurity, Effect: v1alpha1.EffectMayDeny, Caveats: []string{err.Error()}}
	}
	if enforce {
		res := policy.AggregateCheckResults(e.EvaluatePod(nsPolicy.Enforce, &pod.ObjectMeta, &pod.Spec))
		if !res.Allowed {
			msg := fmt.Sprintf("%s %q is forbidden: violates PodSecurity %q: %s", gr.String(), req.Object.GetName(), nsPolicy.Enforce.String(), res.ForbiddenDetail())
			return &v1alpha1.AdmissionStep{Kind: v1alpha1.BuiltinPlugin, Name: podSecurity, Effect: v1alpha1.EffectDenies, Message: msg}
		}
	}
	res := policy.AggregateCheckResults(e.EvaluatePod(nsPolicy.Warn, &pod.ObjectMeta, &pod.Spec))
	if res.Allowed {
		return nil
	}
	return &v1alpha1.AdmissionStep{Kind: v1alpha1.BuiltinPlugin, Name: podSecurity, Effect: v1alpha1.EffectWarns,
		Message: fmt.Sprintf("would violate PodSecurity %q: %s", nsPolicy.Warn.String(), res.ForbiddenDetail())}
}

// significantPodUpdate is pod-security-admission's isSignificantPodUpdate:
// containers added or removed, or an image changed.
func significantPodUpdate(pod, old *corev1.PodSpec) bool {
	if len(pod.Containers) != len(old.Containers) || len(pod.InitContainers) != len(old.InitContainers) {
		return true
	}
	for i := range pod.Containers {
		if pod.Containers[i].Image != old.Containers[i].Image {
			return true
		}
	}
	for i := range pod.InitContainers {
		if pod.InitContainers[i].Image != old.InitContainers[i].Image {
			return true
		}
	}
	for _, c := range pod.EphemeralContainers {
		found := false
		for _, oc := range old.EphemeralContainers {
			if oc.Name == c.Name {
				found = true
				if oc.Image != c.Image {
					return true
				}
				break
			}
		}
		if !found {
			return true
		}
	}
	return false
}
