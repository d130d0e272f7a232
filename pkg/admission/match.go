package admission

import (
	"fmt"
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
)

// rule is a RuleWithOperations or a NamedRuleWithOperations, at any
// version of admissionregistration.
type rule struct {
	Operations    []string `json:"operations"`
	APIGroups     []string `json:"apiGroups"`
	APIVersions   []string `json:"apiVersions"`
	Resources     []string `json:"resources"`
	ResourceNames []string `json:"resourceNames"`
	Scope         string   `json:"scope"`
}

// matcher is what the apiserver matches a request with: a webhook, a
// policy's matchConstraints or a binding's matchResources.
type matcher struct {
	Rules             []rule                `json:"rules"`
	ResourceRules     []rule                `json:"resourceRules"`
	ExcludeRules      []rule                `json:"excludeResourceRules"`
	NamespaceSelector *metav1.LabelSelector `json:"namespaceSelector"`
	ObjectSelector    *metav1.LabelSelector `json:"objectSelector"`
	MatchPolicy       string                `json:"matchPolicy"`
	MatchConditions   []any                 `json:"matchConditions"`
}

func contains(list []string, s string) bool {
	for _, l := range list {
		if l == "*" || l == s {
			return true
		}
	}
	return false
}

// matches is the apiserver's rule matcher (admission/plugin/webhook/
// predicates/rules): operation, group, version (any version of the group
// with matchPolicy Equivalent, the default), resource/subresource, scope.
func (r rule) matches(req Request, equivalent bool) bool {
	gr := req.Resource.GroupResource()
	switch {
	case !contains(r.Operations, req.Operation()),
		!contains(r.APIGroups, req.Resource.Group),
		!equivalent && !contains(r.APIVersions, req.Resource.Version):
		return false
	}
	if len(r.ResourceNames) > 0 && !contains(r.ResourceNames, req.Object.GetName()) {
		return false
	}
	switch r.Scope {
	case "Cluster":
		if req.Namespaced && gr != namespaces {
			return false
		}
	case "Namespaced":
		if !req.Namespaced || gr == namespaces {
			return false
		}
	}
	for _, res := range r.Resources {
		name, sub := res, ""
		for i := 0; i < len(res); i++ {
			if res[i] == '/' {
				name, sub = res[:i], res[i+1:]
				break
			}
		}
		if (name == "*" || name == req.Resource.Resource) && (sub == "*" || sub == req.Subresource) {
			return true
		}
	}
	return false
}

// matches tells whether m selects req, and the caveats of the answer.
func (m *matcher) matches(req Request) (bool, []string) {
	equivalent := m.MatchPolicy != "Exact"
	hit := false
	for _, r := range append(append([]rule{}, m.Rules...), m.ResourceRules...) {
		hit = hit || r.matches(req, equivalent)
	}
	if !hit {
		return false, nil
	}
	for _, r := range m.ExcludeRules {
		if r.matches(req, equivalent) {
			return false, nil
		}
	}
	var caveats []string
	if m.ObjectSelector != nil {
		sel, err := metav1.LabelSelectorAsSelector(m.ObjectSelector)
		if err != nil {
			return false, nil
		}
		ok := sel.Matches(labels.Set(req.Object.GetLabels()))
		if req.Old != nil {
			ok = ok || sel.Matches(labels.Set(req.Old.GetLabels()))
		}
		if !ok {
			return false, nil
		}
	}
	if m.NamespaceSelector != nil {
		sel, err := metav1.LabelSelectorAsSelector(m.NamespaceSelector)
		if err != nil {
			return false, nil
		}
		switch {
		case sel.Empty():
		case req.Resource.GroupResource() == namespaces && req.Subresource == "":
			if !sel.Matches(labels.Set(req.Object.GetLabels())) {
				return false, nil
			}
		case !req.Namespaced:
		case req.NamespaceUnknown:
			caveats = append(caveats, "the namespace's labels could not be read: its namespaceSelector was not checked")
		case !sel.Matches(labels.Set(req.NamespaceLabels)):
			return false, nil
		}
	}
	if len(m.MatchConditions) > 0 {
		caveats = append(caveats, fmt.Sprintf("its %d matchConditions (CEL) were not evaluated: it may not be called", len(m.MatchConditions)))
	}
	return true, caveats
}

func decode(in any, out any) bool {
	m, ok := in.(map[string]any)
	if !ok {
		return false
	}
	return runtime.DefaultUnstructuredConverter.FromUnstructured(m, out) == nil
}

// webhooks are the webhooks of configs that req calls.
func webhooks(configs []*unstructured.Unstructured, kind v1alpha1.AdmissionStepKind, req Request) []v1alpha1.AdmissionStep {
	effect := v1alpha1.EffectMayDeny
	if kind == v1alpha1.MutatingWebhook {
		effect = v1alpha1.EffectMayMutate
	}
	var steps []v1alpha1.AdmissionStep
	for _, c := range sorted(configs) {
		hooks, _, _ := unstructured.NestedSlice(c.Object, "webhooks")
		for _, h := range hooks {
			var m matcher
			if !decode(h, &m) {
				continue
			}
			if ok, caveats := m.matches(req); ok {
				hook, _ := h.(map[string]any)
				name, _ := hook["name"].(string)
				if kind == v1alpha1.MutatingWebhook {
					caveats = append(caveats, "a mutating webhook may refuse the apply too")
				}
				if fp, _ := hook["failurePolicy"].(string); fp != "Ignore" {
					// admissionregistration/v1's default is Fail.
					caveats = append(caveats, "failurePolicy Fail: the apply is refused when the webhook can't be called")
				}
				step := v1alpha1.AdmissionStep{Kind: kind, Name: c.GetName() + "/" + name, Effect: effect, Caveats: caveats}
				if len(m.MatchConditions) > 0 {
					step.Webhook, step.Configuration = hook, c.GetName()
				}
				steps = append(steps, step)
			}
		}
	}
	return steps
}

// everything is what matchResources without resourceRules match.
var everything = []rule{{Operations: []string{"*"}, APIGroups: []string{"*"}, APIVersions: []string{"*"}, Resources: []string{"*/*"}}}

// policyMatcher is a policy's matchConstraints and matchConditions.
func policyMatcher(p *unstructured.Unstructured) (*matcher, bool) {
	mc, found, _ := unstructured.NestedFieldNoCopy(p.Object, "spec", "matchConstraints")
	var m matcher
	if !found || !decode(mc, &m) {
		return nil, false
	}
	if conds, ok, _ := unstructured.NestedSlice(p.Object, "spec", "matchConditions"); ok {
		m.MatchConditions = conds
	}
	if len(m.ResourceRules) == 0 {
		m.ResourceRules = everything
	}
	return &m, true
}

// bound pairs each policy with the bindings that name it, and says which
// bindings select req (a binding without matchResources selects what its
// policy does).
func bound(policies, bindings []*unstructured.Unstructured, req Request, each func(p, b *unstructured.Unstructured, caveats []string)) {
	byName := map[string]*unstructured.Unstructured{}
	for _, p := range policies {
		byName[p.GetName()] = p
	}
	for _, b := range sorted(bindings) {
		name, _, _ := unstructured.NestedString(b.Object, "spec", "policyName")
		p := byName[name]
		if p == nil {
			continue
		}
		pm, ok := policyMatcher(p)
		if !ok {
			continue
		}
		match, caveats := pm.matches(req)
		if !match {
			continue
		}
		if mr, found, _ := unstructured.NestedFieldNoCopy(b.Object, "spec", "matchResources"); found && mr != nil {
			var bm matcher
			if !decode(mr, &bm) {
				continue
			}
			if len(bm.ResourceRules) == 0 {
				// No rules: every resource (its policy's still apply); the
				// selectors do.
				bm.ResourceRules = everything
			}
			ok, more := bm.matches(req)
			if !ok {
				continue
			}
			caveats = append(caveats, more...)
		}
		each(p, b, caveats)
	}
}

func validatingPolicies(c *Config, req Request) []v1alpha1.AdmissionStep {
	var steps []v1alpha1.AdmissionStep
	bound(c.ValidatingPolicies, c.ValidatingBindings, req, func(p, b *unstructured.Unstructured, caveats []string) {
		actions, _, _ := unstructured.NestedStringSlice(b.Object, "spec", "validationActions")
		effect := v1alpha1.EffectAudits
		for _, a := range actions {
			switch {
			case a == "Deny":
				effect = v1alpha1.EffectMayDeny
			case a == "Warn" && effect != v1alpha1.EffectMayDeny:
				effect = v1alpha1.EffectMayWarn
			}
		}
		steps = append(steps, v1alpha1.AdmissionStep{Kind: v1alpha1.ValidatingAdmissionPolicy, Name: fmt.Sprintf("%s (binding %s)", p.GetName(), b.GetName()), Effect: effect, Caveats: caveats})
	})
	return steps
}

func mutatingPolicies(c *Config, req Request) []v1alpha1.AdmissionStep {
	var steps []v1alpha1.AdmissionStep
	bound(c.MutatingPolicies, c.MutatingBindings, req, func(p, b *unstructured.Unstructured, caveats []string) {
		steps = append(steps, v1alpha1.AdmissionStep{Kind: v1alpha1.MutatingAdmissionPolicy, Name: fmt.Sprintf("%s (binding %s)", p.GetName(), b.GetName()), Effect: v1alpha1.EffectMayMutate, Caveats: caveats})
	})
	return steps
}

// sorted orders objects by name, as the apiserver orders policies and
// webhook configurations.
func sorted(in []*unstructured.Unstructured) []*unstructured.Unstructured {
	out := append([]*unstructured.Unstructured{}, in...)
	sort.Slice(out, func(i, j int) bool { return out[i].GetName() < out[j].GetName() })
	return out
}
