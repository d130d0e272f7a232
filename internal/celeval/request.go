package celeval

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	ssaadmission "github.com/kubectl-ssa/kubectl-ssa/pkg/admission"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
)

// checkRequest refuses a request the evaluation can't read: kubectl-ssa
// never writes one, so it names what is missing rather than guess (a
// null in a list would otherwise reach the dispatchers as a nil object).
func checkRequest(req *ssaadmission.PolicyRequest) error {
	if req.Object == nil {
		return errors.New("the request has no object")
	}
	lists := []struct {
		field, kind string
		items       []*unstructured.Unstructured
		binding     bool
	}{
		{"validatingPolicies", "ValidatingAdmissionPolicy", req.ValidatingPolicies, false},
		{"validatingBindings", "ValidatingAdmissionPolicyBinding", req.ValidatingBindings, true},
		{"mutatingPolicies", "MutatingAdmissionPolicy", req.MutatingPolicies, false},
		{"mutatingBindings", "MutatingAdmissionPolicyBinding", req.MutatingBindings, true},
	}
	for _, l := range lists {
		for i, u := range l.items {
			if err := checkItem(l.field, i, l.kind, u, l.binding); err != nil {
				return err
			}
		}
	}
	for i, ps := range req.Params {
		if ps.Kind == "" || ps.APIVersion == "" {
			return fmt.Errorf("params[%d] has no apiVersion or kind", i)
		}
		for j, item := range ps.Items {
			if item == nil {
				return fmt.Errorf("params[%d] (%s %s): item %d is null", i, ps.APIVersion, ps.Kind, j)
			}
		}
	}
	for i, w := range req.Webhooks {
		if w.Kind != v1alpha1.MutatingWebhook && w.Kind != v1alpha1.ValidatingWebhook {
			return fmt.Errorf("webhooks[%d] (%s) is of kind %q, not %s or %s", i, w.Configuration, w.Kind, v1alpha1.MutatingWebhook, v1alpha1.ValidatingWebhook)
		}
		if w.Webhook == nil {
			return fmt.Errorf("webhooks[%d] (%s) has no webhook", i, w.Configuration)
		}
	}
	return nil
}

// checkItem checks one policy or binding of the request's list field.
func checkItem(field string, i int, kind string, u *unstructured.Unstructured, binding bool) error {
	switch {
	case u == nil:
		return fmt.Errorf("%s[%d] is null", field, i)
	case u.GetKind() != kind:
		return fmt.Errorf("%s[%d] (%s) is a %q, not a %s", field, i, u.GetName(), u.GetKind(), kind)
	case u.GetName() == "":
		return fmt.Errorf("%s[%d] (a %s) has no name", field, i, kind)
	}
	if !binding {
		return nil
	}
	if name, _, err := unstructured.NestedString(u.Object, "spec", "policyName"); err != nil || name == "" {
		return fmt.Errorf("%s[%d] (%s %s) names no policy (spec.policyName)", field, i, kind, u.GetName())
	}
	return nil
}
