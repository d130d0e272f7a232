package review_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/pathlang"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/remedy"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/render/review"
)

func TestFromConflict(t *testing.T) {
	replicas := pathlang.ParseServerPath(".spec.replicas")
	was := any(int64(5))
	cases := []struct {
		name string
		r    v1alpha1.ConflictReport
		want []string // rule: message
	}{
		{"controlled reset, with the fix about its path",
			v1alpha1.ConflictReport{ControlledResets: []v1alpha1.ControlledReset{{Path: replicas, Controller: "HorizontalPodAutoscaler web", Value: int64(1), Was: &was}},
				Resolutions: []remedy.Remedy{{Command: remedy.Command{"kubectl", "apply"}}, {Paths: []pathlang.Path{replicas}, Command: remedy.Command{"kubectl", "ssa", "handover"}}}},
			[]string{"controlled-reset: .spec.replicas: HorizontalPodAutoscaler web sets it; the apply resets it to 1 (live: 5) / kubectl ssa handover"}},
		{"admission denial, not an apply error too",
			v1alpha1.ConflictReport{Message: "denied", Admission: &v1alpha1.AdmissionReport{Exact: true, Denied: "denied by policy p", Denials: []string{"a", "b"}}},
			[]string{"admission-denial: denied by policy p (or, in an order the server does not fix: a; b) / "}},
		{"the apiserver's error",
			v1alpha1.ConflictReport{Message: `Deployment.apps "web" is invalid`},
			[]string{`apply-error: Deployment.apps "web" is invalid / `}},
		{"Helm's refusal",
			v1alpha1.ConflictReport{Refused: &v1alpha1.Refusal{Tool: remedy.Helm, Message: "exists and cannot be imported"}},
			[]string{"refused: helm: exists and cannot be imported / "}},
		{"not exact: a webhook matches, and what validation checks",
			v1alpha1.ConflictReport{Admission: &v1alpha1.AdmissionReport{Reasons: []string{"ValidatingWebhook w/x matches: it may deny the apply (not evaluated here)"}}, Unchecked: []string{"two ports named http"}},
			[]string{"not-exact: the prediction is not exact: ValidatingWebhook w/x matches: it may deny the apply (not evaluated here); two ports named http / "}},
		{"nothing", v1alpha1.ConflictReport{}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			for _, p := range review.FromConflict(&c.r).Problems {
				got = append(got, p.Rule+": "+p.Message+" / "+p.Fix)
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestFromAudit(t *testing.T) {
	web := v1alpha1.ObjectRef{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "shop", Name: "web"}
	r := &v1alpha1.AuditReport{Findings: []v1alpha1.Finding{
		{Cluster: "a", Object: web, Code: v1alpha1.CodeManualEdit, Severity: v1alpha1.SeverityWarning, Manager: "kubectl-edit"},
		{Cluster: "b", Object: web, Code: v1alpha1.CodeCSALeftover, Severity: v1alpha1.SeverityWarning},
		{Cluster: "a", Object: web, Code: v1alpha1.CodeSharedAppliers, Severity: v1alpha1.SeverityInfo, Manager: "x", SharedWith: []string{"y"}},
	}}
	got := review.FromAudit(r)
	if len(got) != 2 || got[0].Cluster != "a" || len(got[0].Problems) != 2 || got[1].Cluster != "b" {
		t.Fatalf("objects by cluster and object, in order: %+v", got)
	}
	if diff := cmp.Diff([]string{"x", "y"}, got[0].Problems[1].Owners); diff != "" {
		t.Errorf("owners (-want +got):\n%s", diff)
	}
	if got[0].Problems[1].Level != review.LevelNote {
		t.Errorf("info is a note, got %s", got[0].Problems[1].Level)
	}
}
