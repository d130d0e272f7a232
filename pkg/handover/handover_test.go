package handover

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kubectl-ssa/kubectl-ssa/internal/scenario"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/pathlang"
)

// entry is a managedFields entry written by hand, for the states of
// lastapplied_test.go that the field manager does not write (an
// annotation out of step with the fields); web writes the others.
func entry(manager string, op metav1.ManagedFieldsOperationType, sub, fields string) metav1.ManagedFieldsEntry {
	return metav1.ManagedFieldsEntry{Manager: manager, Operation: op, Subresource: sub, APIVersion: "apps/v1", FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(fields)}
}

func deployment(entries ...metav1.ManagedFieldsEntry) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web", "namespace": "ns", "labels": map[string]any{"app.kubernetes.io/name": "web"}},
		"spec":     map[string]any{"replicas": int64(2), "paused": false},
	}}
	u.SetManagedFields(entries)
	return u
}

// web is the Deployment web as the writes leave it, through the
// apiserver's field manager.
func web(t *testing.T, ops ...scenario.Op) *unstructured.Unstructured {
	t.Helper()
	return (&scenario.State{}).Run(t, ops...).Live
}

// applySpec is manager's apply of web's spec.
func applySpec(manager, spec string) scenario.Apply {
	return scenario.Apply{Manager: manager, Manifest: "{apiVersion: apps/v1, kind: Deployment, metadata: {name: web, namespace: ns}, spec: " + spec + "}"}
}

// labelled is web with its label.
const labelled = "{apiVersion: apps/v1, kind: Deployment, metadata: {name: web, namespace: ns, labels: {app.kubernetes.io/name: web}}}"

// scale is manager's write of web's replicas through /scale.
func scale(manager string, replicas int64) scenario.Update {
	return scenario.Update{Manager: manager, Subresource: "scale", Mutate: scenario.Set(replicas, "spec", "replicas")}
}

// kubectlApply is kubectl's server-side apply of replicas and paused.
var kubectlApply = applySpec("kubectl", "{replicas: 2, paused: false}")

func path(s string) fieldpath.Path {
	p, err := pathlang.ParsePath(s)
	if err != nil {
		panic(err)
	}
	return p
}

func steps(r *v1alpha1.HandoverReport) string {
	var out []string
	for _, s := range r.Steps {
		out = append(out, string(s.Name)+":"+s.Manager)
	}
	return strings.Join(out, " ")
}

func TestPlan(t *testing.T) {
	now := time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name       string
		live       *unstructured.Unstructured
		req        Request
		wantMode   v1alpha1.HandoverMode
		wantStatus v1alpha1.HandoverStatus
		wantSteps  string
		wantErr    string
	}{
		{
			name:       "to a controller: hold, release, wait",
			live:       web(t, kubectlApply),
			req:        Request{Fields: []fieldpath.Path{path(".spec.replicas")}, From: "kubectl", To: "kube-controller-manager", Wait: true},
			wantMode:   v1alpha1.HandoverController,
			wantStatus: "planned",
			wantSteps:  "hold:kubectl-ssa-handover release:kubectl wait:kube-controller-manager",
		},
		{
			name:       "to a controller, already held: only the release remains",
			live:       web(t, kubectlApply, applySpec(DefaultTempManager, "{replicas: 2}")),
			req:        Request{Fields: []fieldpath.Path{path(".spec.replicas")}, From: "kubectl", To: "kube-controller-manager"},
			wantMode:   v1alpha1.HandoverController,
			wantStatus: "planned",
			wantSteps:  "release:kubectl",
		},
		{
			name:       "to a controller, done",
			live:       web(t, applySpec("kubectl", "{paused: false}"), scale("kube-controller-manager", 2)),
			req:        Request{Fields: []fieldpath.Path{path(".spec.replicas")}, From: "kubectl", To: "kube-controller-manager"},
			wantMode:   v1alpha1.HandoverController,
			wantStatus: "already-complete",
		},
		{
			name:       "between appliers: share, release",
			live:       web(t, kubectlApply),
			req:        Request{Fields: []fieldpath.Path{path(".spec.paused")}, From: "kubectl", To: "argocd-controller"},
			wantMode:   v1alpha1.HandoverApplier,
			wantStatus: "planned",
			wantSteps:  "share:argocd-controller release:kubectl",
		},
		{
			name:       "same name, another subresource",
			live:       web(t, applySpec("kubectl", "{paused: false}"), scale("kubectl", 2)),
			req:        Request{Fields: []fieldpath.Path{path(".spec.replicas")}, From: "kubectl", FromSubresource: "scale", To: "kubectl"},
			wantMode:   v1alpha1.HandoverApplier,
			wantStatus: "planned",
			wantSteps:  "share:kubectl release:kubectl",
		},
		{
			name:       "release a dotted label",
			live:       web(t, scenario.Update{Manager: "kubectl-client-side-apply", Create: labelled}),
			req:        Request{Fields: []fieldpath.Path{{fieldpath.PathElement{FieldName: strp("metadata")}, fieldpath.PathElement{FieldName: strp("labels")}, fieldpath.PathElement{FieldName: strp("app.kubernetes.io/name")}}}, From: "kubectl-client-side-apply", Mode: v1alpha1.HandoverRelease},
			wantMode:   v1alpha1.HandoverRelease,
			wantStatus: "planned",
			wantSteps:  "release:kubectl-client-side-apply",
		},
		{
			name:    "the source does not own the field",
			live:    web(t, kubectlApply, scenario.Apply{Manager: "other", Manifest: labelled}),
			req:     Request{Fields: []fieldpath.Path{{fieldpath.PathElement{FieldName: strp("metadata")}, fieldpath.PathElement{FieldName: strp("labels")}, fieldpath.PathElement{FieldName: strp("app.kubernetes.io/name")}}}, From: "kubectl", To: "argocd"},
			wantErr: `"kubectl" does not own .metadata.labels["app.kubernetes.io/name"] (owners: "other")`,
		},
		{
			name:    "no such field",
			live:    web(t, kubectlApply),
			req:     Request{Fields: []fieldpath.Path{path(".spec.minReadySeconds")}, From: "kubectl", To: "argocd"},
			wantErr: ".spec.minReadySeconds is not set on the object",
		},
		{
			name:    "the root path hands over nothing",
			live:    web(t, kubectlApply),
			req:     Request{Fields: []fieldpath.Path{path(".spec.paused"), {}}, From: "kubectl", To: "argocd"},
			wantErr: "a field's path is empty and names the whole object",
		},
		{
			name:    "the root path releases nothing",
			live:    web(t, kubectlApply),
			req:     Request{Fields: []fieldpath.Path{{}}, From: "kubectl", Mode: v1alpha1.HandoverRelease},
			wantErr: `release all of "kubectl"'s with kubectl ssa handover release --all`,
		},
		{
			name:    "no such manager",
			live:    web(t, kubectlApply),
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
	live := web(t, kubectlApply)
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
