package conflict_test

import (
	"context"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/admission"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/conflict"
)

// denyingSource is an OfflineSource where one ValidatingAdmissionPolicy
// denies every ConfigMap (its evaluation answered by a fixed result), and
// whose server dry run is denied the same way.
type denyingSource struct {
	*conflict.OfflineSource
	message string
}

func (s *denyingSource) Admission(_ context.Context, obj *unstructured.Unstructured) (*admission.Config, admission.Request, error) {
	policy := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "no-cm"}, "spec": map[string]any{
		"matchConstraints": map[string]any{"resourceRules": []any{map[string]any{
			"operations": []any{"*"}, "apiGroups": []any{""}, "apiVersions": []any{"*"}, "resources": []any{"configmaps"}}}}}}}
	binding := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "no-cm"}, "spec": map[string]any{
		"policyName": "no-cm", "validationActions": []any{"Deny"}}}}
	eval := denyAll{&admission.PolicyResult{Denied: s.message, Bindings: []admission.BindingResult{
		{Kind: v1alpha1.ValidatingAdmissionPolicy, Policy: "no-cm", Binding: "no-cm", Outcome: admission.Denied, Messages: []string{s.message}}}}}
	cfg := &admission.Config{ValidatingPolicies: []*unstructured.Unstructured{policy}, ValidatingBindings: []*unstructured.Unstructured{binding}, Policies: eval}
	return cfg, admission.Request{Resource: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, Namespaced: true, NamespaceLabels: map[string]string{}}, nil
}

func (s *denyingSource) DryRunApply(context.Context, *unstructured.Unstructured, *unstructured.Unstructured, metav1.ApplyOptions, string) (*unstructured.Unstructured, error) {
	return nil, &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: 422, Reason: metav1.StatusReasonInvalid, Message: s.message}}
}

type denyAll struct{ res *admission.PolicyResult }

func (e denyAll) EvaluatePolicies(*admission.PolicyRequest) (*admission.PolicyResult, error) {
	return e.res, nil
}

// TestVerifyDenialOfAClientSideObject: a policy denies the apply of an
// object applied client-side, and the server denies it too. The dry run
// is kubectl's first apply, admission was evaluated on its last: a denial
// is a denial whatever the object's history, so both sides agree (no
// false alarm, no "please report this as a bug").
func TestVerifyDenialOfAClientSideObject(t *testing.T) {
	const msg = "ValidatingAdmissionPolicy 'no-cm' with binding 'no-cm' denied request: no ConfigMaps here"
	for _, tt := range []struct {
		name string
		live string
	}{
		{"applied client-side", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"shop","resourceVersion":"1",
			"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{\"apiVersion\":\"v1\",\"data\":{\"a\":\"1\"},\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"c\",\"namespace\":\"shop\"}}\n"},
			"managedFields":[{"manager":"kubectl-client-side-apply","operation":"Update","apiVersion":"v1","fieldsType":"FieldsV1",
			"fieldsV1":{"f:data":{".":{},"f:a":{}},"f:metadata":{"f:annotations":{".":{},"f:kubectl.kubernetes.io/last-applied-configuration":{}}}}}]},"data":{"a":"1"}}`},
		{"applied server-side", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"shop","resourceVersion":"1",
			"managedFields":[{"manager":"kubectl","operation":"Apply","apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{"f:a":{}}}}]},"data":{"a":"1"}}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			offline, err := conflict.NewOfflineSource([]*unstructured.Unstructured{manifest(t, tt.live)}, nil)
			if err != nil {
				t.Fatal(err)
			}
			src := &denyingSource{OfflineSource: offline, message: msg}
			applied := manifest(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"shop"},"data":{"a":"2"}}`)
			r, err := explainVerified(context.Background(), src, applied, conflict.Options{FieldManager: "kubectl", KubectlUpgrade: true})
			if err != nil {
				t.Fatal(err)
			}
			if r.Admission == nil || r.Admission.Denied != msg {
				t.Fatalf("admission %+v, want the denial", r.Admission)
			}
			if r.Verify == nil || r.Verify.Status != v1alpha1.VerifyAgrees {
				t.Errorf("verify %+v, want agrees", r.Verify)
			}
		})
	}
}

// invalidSource is an OfflineSource whose server dry run refuses the
// apply with its validation (422), which the prediction does not model.
type invalidSource struct {
	*conflict.OfflineSource
	message string
}

func (s *invalidSource) DryRunApply(context.Context, *unstructured.Unstructured, *unstructured.Unstructured, metav1.ApplyOptions, string) (*unstructured.Unstructured, error) {
	return nil, &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: 422, Reason: metav1.StatusReasonInvalid, Message: s.message}}
}

// TestVerifyValidationRefusal: the server's validation refuses what the
// prediction applies (a ConfigMap key with a space). The prediction was
// not exact, and says so; the server's answer stands (resolved, its
// message kept): no "please report this as a bug".
func TestVerifyValidationRefusal(t *testing.T) {
	const msg = `ConfigMap "c" is invalid: data[bad key]: Invalid value: "bad key": a valid config key must consist of alphanumeric characters`
	offline, err := conflict.NewOfflineSource(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	applied := manifest(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"shop"},"data":{"bad key":"v"}}`)
	r, err := explainVerified(context.Background(), &invalidSource{OfflineSource: offline, message: msg}, applied, conflict.Options{FieldManager: "kubectl"})
	if err != nil {
		t.Fatal(err)
	}
	if r.Verify == nil || r.Verify.Status != v1alpha1.VerifyResolved || r.Verify.ServerDenied != msg {
		t.Fatalf("verify %+v, want resolved with the server's message", r.Verify)
	}
	if len(r.Unchecked) == 0 {
		t.Errorf("unchecked empty: the prediction must say it was not exact")
	}
}
