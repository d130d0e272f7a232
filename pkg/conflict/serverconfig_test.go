package conflict_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/conflict"
)

// refusingSource is an OfflineSource whose server dry run refuses every
// apply with one validation error.
type refusingSource struct {
	*conflict.OfflineSource
	refusal error
}

func (s *refusingSource) DryRunApply(context.Context, *unstructured.Unstructured, *unstructured.Unstructured, metav1.ApplyOptions, string) (*unstructured.Unstructured, error) {
	return nil, s.refusal
}

const (
	privilegedDeployment = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"shop"},"spec":{"selector":{"matchLabels":{"app":"web"}},
"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"web","image":"nginx","securityContext":{"privileged":true}}]}}}}`
	plainDeployment = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"shop"},"spec":{"selector":{"matchLabels":{"app":"web"}},
"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"web","image":"nginx"}]}}}}`
	nodePortService = `{"apiVersion":"v1","kind":"Service","metadata":{"name":"web","namespace":"shop"},"spec":{"type":"NodePort","ports":[{"port":80,"nodePort":30080}]}}`
)

func invalid(kind schema.GroupKind, errs ...*field.Error) error {
	return apierrors.NewInvalid(kind, "web", errs)
}

// TestVerifyServerConfiguration: a refusal the apiserver's own
// configuration decides (its --allow-privileged flag, the node ports it
// holds) is the server's answer to what the prediction can't know
// (resolved, named), when the object uses that setting; any other
// validation refusal (422) is the kind's validation, which the prediction
// does not model: resolved too, not exact, no setting named.
func TestVerifyServerConfiguration(t *testing.T) {
	deployment := schema.GroupKind{Group: "apps", Kind: "Deployment"}
	privileged := field.Forbidden(field.NewPath("spec", "template", "spec", "containers").Index(0).Child("securityContext", "privileged"), "disallowed by cluster policy")
	tests := []struct {
		name     string
		manifest string
		refusal  error
		status   v1alpha1.VerifyStatus
		settings []string
		caveat   string
	}{
		{name: "privileged where the server does not allow it", manifest: privilegedDeployment, refusal: invalid(deployment, privileged),
			status: v1alpha1.VerifyResolved, settings: []string{"--allow-privileged"}, caveat: "--allow-privileged"},
		{name: "the same words for an object without a privileged container", manifest: plainDeployment, refusal: invalid(deployment, privileged),
			status: v1alpha1.VerifyResolved},
		{name: "privileged, refused for something else", manifest: privilegedDeployment,
			refusal: invalid(deployment, field.Invalid(field.NewPath("spec", "replicas"), -1, "must be greater than or equal to 0")),
			status:  v1alpha1.VerifyResolved, caveat: "--allow-privileged"},
		{name: "a node port another Service holds", manifest: nodePortService,
			refusal: invalid(schema.GroupKind{Kind: "Service"}, field.Invalid(field.NewPath("spec", "ports").Index(0).Child("nodePort"), 30080, "provided port is already allocated")),
			status:  v1alpha1.VerifyResolved, settings: []string{"--service-node-port-range"}, caveat: "--service-node-port-range"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			offline, err := conflict.NewOfflineSource(nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			src := &refusingSource{OfflineSource: offline, refusal: tt.refusal}
			r, err := explainVerified(context.Background(), src, manifest(t, tt.manifest), conflict.Options{FieldManager: "ci"})
			if err != nil {
				t.Fatal(err)
			}
			if r.Verify == nil {
				t.Fatal("not verified")
			}
			if r.Verify.Status != tt.status || !cmp.Equal(r.Verify.ServerConfiguration, tt.settings) {
				t.Errorf("status %s, server configuration %q; want %s, %q\n%+v", r.Verify.Status, r.Verify.ServerConfiguration, tt.status, tt.settings, *r.Verify)
			}
			if denied := r.Verify.ServerDenied != ""; denied != (tt.status == v1alpha1.VerifyResolved) {
				t.Errorf("server denied %q", r.Verify.ServerDenied)
			}
			caveat := ""
			for _, w := range r.Warnings {
				if strings.Contains(w, "the apiserver's flag --") {
					caveat = w
				}
			}
			if tt.caveat == "" && caveat != "" || !strings.Contains(caveat, tt.caveat) {
				t.Errorf("caveat %q, want one naming %q (warnings %q)", caveat, tt.caveat, r.Warnings)
			}
		})
	}
}
