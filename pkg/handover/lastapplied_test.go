package handover

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kubectl-ssa/kubectl-ssa/internal/scenario"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/pathlang"
)

// csaDeployment is a Deployment as kubectl apply (client-side) leaves it,
// replicas and a label in its last-applied annotation, and then
// autoscaled.
func csaDeployment(annotation string, entries ...metav1.ManagedFieldsEntry) *unstructured.Unstructured {
	u := deployment(entries...)
	u.SetAnnotations(map[string]string{"kubectl.kubernetes.io/last-applied-configuration": annotation})
	return u
}

const lastApplied = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"annotations":{},"labels":{"app.kubernetes.io/name":"web"},"name":"web","namespace":"ns"},"spec":{"paused":false,"replicas":2}}` + "\n"

// csaCreate is kubectl apply's (client-side) create of lastApplied as
// manager: it owns the annotation and what the annotation declares.
func csaCreate(manager string) scenario.Update {
	return scenario.Update{Manager: manager, Create: `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: ns
  labels: {app.kubernetes.io/name: web}
  annotations:
    kubectl.kubernetes.io/last-applied-configuration: |
      ` + lastApplied + `
spec: {paused: false, replicas: 2}
`}
}

func TestPlanLastApplied(t *testing.T) {
	now := time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)
	csaFields := `{"f:metadata":{"f:annotations":{".":{},"f:kubectl.kubernetes.io/last-applied-configuration":{}},"f:labels":{".":{},"f:app.kubernetes.io/name":{}}},"f:spec":{"f:paused":{},"f:replicas":{}}}`
	// csa is csaCreate's entry, for the annotations it did not write.
	csa := entry("kubectl-client-side-apply", "Update", "", csaFields)
	replicas := []fieldpath.Path{path(".spec.replicas")}
	label := []fieldpath.Path{path(`.metadata.labels["app.kubernetes.io/name"]`)}
	tests := []struct {
		name        string
		live        *unstructured.Unstructured
		req         Request
		wantSteps   string
		wantStatus  v1alpha1.HandoverStatus
		wantEdit    *v1alpha1.LastAppliedEdit // of the step that carries it
		wantValue   string
		wantErr     string
		wantFix     string
		wantWarning string
	}{
		{
			name:       "to a controller: the release takes replicas out of the annotation",
			live:       web(t, csaCreate("kubectl-client-side-apply")),
			req:        Request{Fields: replicas, From: "kubectl-client-side-apply", To: "kube-controller-manager"},
			wantSteps:  "hold:kubectl-ssa-handover release:kubectl-client-side-apply",
			wantStatus: v1alpha1.HandoverPlanned,
			wantEdit:   &v1alpha1.LastAppliedEdit{Annotation: "kubectl.kubernetes.io/last-applied-configuration", Manager: "kubectl-client-side-apply", Removed: paths(".spec.replicas")},
			wantValue:  `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"annotations":{},"labels":{"app.kubernetes.io/name":"web"},"name":"web","namespace":"ns"},"spec":{"paused":false}}` + "\n",
		},
		{
			name:       "handed over by an earlier version: only the annotation is left to edit",
			live:       web(t, csaCreate("kubectl-client-side-apply"), scale("kube-controller-manager", 3)),
			req:        Request{Fields: replicas, From: "kubectl-client-side-apply", To: "kube-controller-manager"},
			wantSteps:  "last-applied:kubectl-client-side-apply",
			wantStatus: v1alpha1.HandoverPlanned,
			wantEdit:   &v1alpha1.LastAppliedEdit{Annotation: "kubectl.kubernetes.io/last-applied-configuration", Manager: "kubectl-client-side-apply", Removed: paths(".spec.replicas")},
			wantValue:  `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"annotations":{},"labels":{"app.kubernetes.io/name":"web"},"name":"web","namespace":"ns"},"spec":{"paused":false}}` + "\n",
		},
		{
			name: "and once that is done, nothing",
			live: csaDeployment(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},"spec":{"paused":false}}`,
				entry("kubectl-client-side-apply", "Update", "", `{"f:metadata":{"f:annotations":{".":{},"f:kubectl.kubernetes.io/last-applied-configuration":{}}},"f:spec":{"f:paused":{}}}`),
				entry("kube-controller-manager", "Update", "scale", `{"f:spec":{"f:replicas":{}}}`)),
			req:        Request{Fields: replicas, From: "kubectl-client-side-apply", To: "kube-controller-manager"},
			wantStatus: v1alpha1.HandoverAlreadyComplete,
		},
		{
			name:       "kubectl apply --field-manager=ci: the manager that owns the annotation",
			live:       web(t, csaCreate("ci")),
			req:        Request{Fields: replicas, From: "ci", To: "argocd", Mode: v1alpha1.HandoverApplier},
			wantSteps:  "share:argocd release:ci",
			wantStatus: v1alpha1.HandoverPlanned,
			wantEdit:   &v1alpha1.LastAppliedEdit{Annotation: "kubectl.kubernetes.io/last-applied-configuration", Manager: "ci", Removed: paths(".spec.replicas")},
			wantValue:  `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"annotations":{},"labels":{"app.kubernetes.io/name":"web"},"name":"web","namespace":"ns"},"spec":{"paused":false}}` + "\n",
		},
		{
			name: "kubectl-client-side-apply, the annotation written by kubectl create --save-config: sent as its owner",
			live: csaDeployment(lastApplied,
				entry("kubectl-create", "Update", "", `{"f:metadata":{"f:annotations":{".":{},"f:kubectl.kubernetes.io/last-applied-configuration":{}}}}`),
				entry("kubectl-client-side-apply", "Update", "", `{"f:spec":{"f:replicas":{}}}`)),
			req:        Request{Fields: replicas, From: "kubectl-client-side-apply", Mode: v1alpha1.HandoverRelease},
			wantSteps:  "release:kubectl-client-side-apply",
			wantStatus: v1alpha1.HandoverPlanned,
			wantEdit:   &v1alpha1.LastAppliedEdit{Annotation: "kubectl.kubernetes.io/last-applied-configuration", Manager: "kubectl-create", Removed: paths(".spec.replicas")},
			wantValue:  `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"annotations":{},"labels":{"app.kubernetes.io/name":"web"},"name":"web","namespace":"ns"},"spec":{"paused":false}}` + "\n",
		},
		{
			name:       "a map left empty goes too: an empty labels would make kubectl delete them all",
			live:       web(t, csaCreate("kubectl-client-side-apply")),
			req:        Request{Fields: label, From: "kubectl-client-side-apply", Mode: v1alpha1.HandoverRelease},
			wantSteps:  "release:kubectl-client-side-apply",
			wantStatus: v1alpha1.HandoverPlanned,
			wantEdit:   &v1alpha1.LastAppliedEdit{Annotation: "kubectl.kubernetes.io/last-applied-configuration", Manager: "kubectl-client-side-apply", Removed: paths(`.metadata.labels["app.kubernetes.io/name"]`)},
			wantValue:  `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"annotations":{},"name":"web","namespace":"ns"},"spec":{"paused":false,"replicas":2}}` + "\n",
		},
		{
			name:       "release --all: the annotation goes",
			live:       web(t, csaCreate("kubectl-client-side-apply")),
			req:        Request{From: "kubectl-client-side-apply", Mode: v1alpha1.HandoverRelease},
			wantSteps:  "release:kubectl-client-side-apply",
			wantStatus: v1alpha1.HandoverPlanned,
			wantEdit:   &v1alpha1.LastAppliedEdit{Annotation: "kubectl.kubernetes.io/last-applied-configuration", Manager: "kubectl-client-side-apply", Removed: paths(), Deleted: true},
		},
		{
			name:       "a server-side applier: the annotation is not its",
			live:       csaDeployment(lastApplied, entry("kubectl", "Apply", "", `{"f:spec":{"f:replicas":{}}}`)),
			req:        Request{Fields: replicas, From: "kubectl", To: "kube-controller-manager"},
			wantSteps:  "hold:kubectl-ssa-handover release:kubectl",
			wantStatus: v1alpha1.HandoverPlanned,
		},
		{
			name:       "a field the annotation does not hold: no edit",
			live:       csaDeployment(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"}}`, csa),
			req:        Request{Fields: replicas, From: "kubectl-client-side-apply", To: "kube-controller-manager"},
			wantSteps:  "hold:kubectl-ssa-handover release:kubectl-client-side-apply",
			wantStatus: v1alpha1.HandoverPlanned,
		},
		{
			name:    "not JSON: refused, with the command that clears it",
			live:    csaDeployment(`{"spec":`, csa),
			req:     Request{Fields: replicas, From: "kubectl-client-side-apply", To: "kube-controller-manager"},
			wantErr: `Deployment/ns/web: the kubectl.kubernetes.io/last-applied-configuration annotation of client-side apply ("kubectl-client-side-apply") can't be edited exactly: it is not JSON (unexpected end of JSON input)`,
			wantFix: "kubectl annotate deployment.v1.apps/web kubectl.kubernetes.io/last-applied-configuration- -n ns",
		},
		{
			name:    "written at another apiVersion: refused",
			live:    csaDeployment(`{"apiVersion":"apps/v1beta2","kind":"Deployment","spec":{"replicas":2}}`, csa),
			req:     Request{Fields: replicas, From: "kubectl-client-side-apply", To: "kube-controller-manager"},
			wantErr: "it was written at apps/v1beta2, the object is read at apps/v1",
			wantFix: "kubectl annotate deployment.v1.apps/web kubectl.kubernetes.io/last-applied-configuration- -n ns",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Plan(tt.live, tt.req, now)
			if tt.wantErr != "" {
				var herr *Error
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !asError(err, &herr) {
					t.Fatalf("err %v, want %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), "\n") {
					t.Errorf("the error is not one line: %q", err)
				}
				if got := strings.Join(herr.Fix, " "); got != tt.wantFix {
					t.Errorf("fix %q, want %q", got, tt.wantFix)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if r.Status != tt.wantStatus {
				t.Errorf("status %q, want %q", r.Status, tt.wantStatus)
			}
			if diff := cmp.Diff(tt.wantSteps, steps(r)); diff != "" {
				t.Errorf("steps (-want +got):\n%s", diff)
			}
			var got *v1alpha1.LastAppliedEdit
			for _, s := range r.Steps {
				if s.LastApplied != nil {
					got = s.LastApplied
				}
			}
			if diff := cmp.Diff(tt.wantEdit, got, cmp.Comparer(func(a, b v1alpha1.LastAppliedEdit) bool {
				return a.Annotation == b.Annotation && a.Manager == b.Manager && a.Deleted == b.Deleted && cmp.Equal(a.Removed, b.Removed)
			})); diff != "" {
				t.Errorf("edit (-want +got):\n%s", diff)
			}
			if got != nil && got.Value != tt.wantValue {
				t.Errorf("annotation after the edit:\n got %s\nwant %s", got.Value, tt.wantValue)
			}
		})
	}
}

func paths(ss ...string) []ownershipPath {
	out := []ownershipPath{}
	for _, s := range ss {
		out = append(out, ownershipPath(path(s)))
	}
	return out
}

type ownershipPath = pathlang.Path

func asError(err error, target **Error) bool { return errors.As(err, target) }

// The write that edits the annotation changes no other value: what holds
// the annotation is compared without it (the apiserver drops an
// annotations map the edit leaves empty).
func TestUnchangedIgnoresTheAnnotation(t *testing.T) {
	before := csaDeployment(lastApplied)
	after := deployment()
	annotations := path(".metadata.annotations")
	edit := &v1alpha1.LastAppliedEdit{Deleted: true}
	if err := unchanged(before, after, []fieldpath.Path{annotations, lastAppliedPath, path(".spec.replicas")}, edit, false); err != nil {
		t.Errorf("annotation removed: %v", err)
	}
	if err := unchanged(before, after, []fieldpath.Path{annotations}, nil, false); err == nil {
		t.Errorf("without an edit the change is not seen")
	}
	kept := csaDeployment("{}")
	kept.SetAnnotations(map[string]string{"team": "pay", "kubectl.kubernetes.io/last-applied-configuration": "{}"})
	changed := deployment()
	changed.SetAnnotations(map[string]string{"team": "ads"})
	if err := unchanged(kept, changed, []fieldpath.Path{annotations}, edit, false); err == nil {
		t.Errorf("another annotation's change is not seen")
	}
}
