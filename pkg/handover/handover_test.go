package handover

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/pathlang"
)

func entry(manager string, op metav1.ManagedFieldsOperationType, sub, fields string) metav1.ManagedFieldsEntry {
	return metav1.ManagedFieldsEntry{Manager: manager, Operation: op, Subresource: sub, APIVersion: "apps/v1", FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(fields)}
}

func deployment(entries ...metav1.ManagedFieldsEntry) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]interface{}{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]interface{}{"name": "web", "namespace": "ns", "labels": map[string]interface{}{"app.kubernetes.io/name": "web"}},
		"spec":     map[string]interface{}{"replicas": int64(2), "paused": false},
	}}
	u.SetManagedFields(entries)
	return u
}

func path(s string) fieldpath.Path {
	p, err := pathlang.ParsePath(s)
	if err != nil {
		panic(err)
	}
	return p
}

func steps(r *Report) string {
	var out []string
	for _, s := range r.Steps {
		out = append(out, string(s.Name)+":"+s.Manager)
	}
	return strings.Join(out, " ")
}

func TestPlan(t *testing.T) {
	now := time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)
	kubectlApply := entry("kubectl", "Apply", "", `{"f:spec":{"f:replicas":{},"f:paused":{}}}`)
	tests := []struct {
		name       string
		live       *unstructured.Unstructured
		req        Request
		wantMode   Mode
		wantStatus Status
		wantSteps  string
		wantErr    string
	}{
		{
			name:       "to a controller: hold, release, wait",
			live:       deployment(kubectlApply),
			req:        Request{Fields: []fieldpath.Path{path(".spec.replicas")}, From: "kubectl", To: "kube-controller-manager", Wait: true},
			wantMode:   ModeController,
			wantStatus: "planned",
			wantSteps:  "hold:kubectl-ssa-handover release:kubectl wait:kube-controller-manager",
		},
		{
			name:       "to a controller, already held: only the release remains",
			live:       deployment(kubectlApply, entry(DefaultTempManager, "Apply", "", `{"f:spec":{"f:replicas":{}}}`)),
			req:        Request{Fields: []fieldpath.Path{path(".spec.replicas")}, From: "kubectl", To: "kube-controller-manager"},
			wantMode:   ModeController,
			wantStatus: "planned",
			wantSteps:  "release:kubectl",
		},
		{
			name:       "to a controller, done",
			live:       deployment(entry("kubectl", "Apply", "", `{"f:spec":{"f:paused":{}}}`), entry("kube-controller-manager", "Update", "scale", `{"f:spec":{"f:replicas":{}}}`)),
			req:        Request{Fields: []fieldpath.Path{path(".spec.replicas")}, From: "kubectl", To: "kube-controller-manager"},
			wantMode:   ModeController,
			wantStatus: "already-complete",
		},
		{
			name:       "between appliers: share, release",
			live:       deployment(kubectlApply),
			req:        Request{Fields: []fieldpath.Path{path(".spec.paused")}, From: "kubectl", To: "argocd-controller"},
			wantMode:   ModeApplier,
			wantStatus: "planned",
			wantSteps:  "share:argocd-controller release:kubectl",
		},
		{
			name:       "same name, another subresource",
			live:       deployment(entry("kubectl", "Apply", "", `{"f:spec":{"f:paused":{}}}`), entry("kubectl", "Update", "scale", `{"f:spec":{"f:replicas":{}}}`)),
			req:        Request{Fields: []fieldpath.Path{path(".spec.replicas")}, From: "kubectl", FromSubresource: "scale", To: "kubectl"},
			wantMode:   ModeApplier,
			wantStatus: "planned",
			wantSteps:  "share:kubectl release:kubectl",
		},
		{
			name:       "release a dotted label",
			live:       deployment(entry("kubectl-client-side-apply", "Update", "", `{"f:metadata":{"f:labels":{"f:app.kubernetes.io/name":{}}}}`)),
			req:        Request{Fields: []fieldpath.Path{{fieldpath.PathElement{FieldName: strp("metadata")}, fieldpath.PathElement{FieldName: strp("labels")}, fieldpath.PathElement{FieldName: strp("app.kubernetes.io/name")}}}, From: "kubectl-client-side-apply", Mode: ModeRelease},
			wantMode:   ModeRelease,
			wantStatus: "planned",
			wantSteps:  "release:kubectl-client-side-apply",
		},
		{
			name:    "the source does not own the field",
			live:    deployment(kubectlApply, entry("other", "Apply", "", `{"f:metadata":{"f:labels":{"f:app.kubernetes.io/name":{}}}}`)),
			req:     Request{Fields: []fieldpath.Path{{fieldpath.PathElement{FieldName: strp("metadata")}, fieldpath.PathElement{FieldName: strp("labels")}, fieldpath.PathElement{FieldName: strp("app.kubernetes.io/name")}}}, From: "kubectl", To: "argocd"},
			wantErr: `"kubectl" does not own .metadata.labels["app.kubernetes.io/name"] (owners: "other")`,
		},
		{
			name:    "no such field",
			live:    deployment(kubectlApply),
			req:     Request{Fields: []fieldpath.Path{path(".spec.minReadySeconds")}, From: "kubectl", To: "argocd"},
			wantErr: ".spec.minReadySeconds is not set on the object",
		},
		{
			name:    "no such manager",
			live:    deployment(kubectlApply),
			req:     Request{Fields: []fieldpath.Path{path(".spec.replicas")}, From: "ghost", To: "argocd"},
			wantErr: `there is no manager "ghost" on the object`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Plan(tt.live, tt.req, now)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !IsError(err) {
					t.Fatalf("err %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if r.Mode != tt.wantMode || r.Status != tt.wantStatus {
				t.Errorf("mode %q status %q", r.Mode, r.Status)
			}
			if diff := cmp.Diff(tt.wantSteps, steps(r)); diff != "" {
				t.Errorf("steps (-want +got):\n%s", diff)
			}
		})
	}
}

// The last step's managedFields: the source owns nothing of the fields,
// the target (or the temporary manager) owns them all.
func TestPlanPredictsOwnership(t *testing.T) {
	live := deployment(entry("kubectl", "Apply", "", `{"f:spec":{"f:replicas":{},"f:paused":{}}}`))
	r, err := Plan(live, Request{Fields: []fieldpath.Path{path(".spec.paused")}, From: "kubectl", To: "argocd"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	last := r.Steps[len(r.Steps)-1].ManagedFields
	owners, err := ownership.Owners(last, path(".spec.paused"))
	if err != nil || len(owners) != 1 || owners[0].Manager != "argocd" || owners[0].Operation != "Apply" {
		t.Errorf("owners of .spec.paused after the plan: %+v %v", owners, err)
	}
	if o, _ := ownership.Owners(last, path(".spec.replicas")); len(o) != 1 || o[0].Manager != "kubectl" {
		t.Errorf("the other field moved too: %+v", o)
	}
}

func strp(s string) *string { return &s }
