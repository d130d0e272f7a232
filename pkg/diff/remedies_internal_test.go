package diff

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/remedy"
)

func TestRemedies(t *testing.T) {
	conflicts := []v1alpha1.Conflict{{Manager: "other"}}
	kubectl := remedy.Target{File: "web.yaml", ResourceArg: "deployment/web", Namespace: "shop", FieldManager: "ci"}
	explain := remedy.Remedy{Kind: remedy.Explain, Summary: "see why and the ways out",
		Command: remedy.Command{"kubectl", "ssa", "explain-conflict", "-n", "shop", "--field-manager=ci", "-f", "web.yaml"}}
	tests := []struct {
		name   string
		r      v1alpha1.DiffReport
		t      remedy.Target
		want   []string // the commands, as pasted, or the Helm flags
		resets []string
	}{
		{name: "no conflicts", t: kubectl},
		{name: "forced", r: v1alpha1.DiffReport{ApplyMeta: v1alpha1.ApplyMeta{Force: true}, Conflicts: conflicts}, t: kubectl},
		{name: "kubectl", r: v1alpha1.DiffReport{Conflicts: conflicts}, t: kubectl,
			want: []string{"kubectl apply --server-side --force-conflicts --field-manager=ci -n shop -f web.yaml", explain.Command.String()}},
		{name: "a subresource: no kubectl command forces it", r: v1alpha1.DiffReport{Conflicts: conflicts},
			t:    remedy.Target{File: "s.yaml", FieldManager: "ci", Subresource: "scale"},
			want: []string{"kubectl ssa explain-conflict --field-manager=ci --subresource=scale -f s.yaml"}},
		{name: "helm", r: v1alpha1.DiffReport{Conflicts: conflicts}, t: remedy.Target{FieldManager: "helm", HelmRelease: "web"},
			want: []string{"helm upgrade with --server-side=true --force-conflicts", "kubectl ssa explain-conflict --field-manager=helm --helm-release web"}},
		{name: "resets", r: v1alpha1.DiffReport{ControlledResets: []v1alpha1.ControlledReset{{}}}, t: kubectl,
			resets: []string{explain.Command.String()}},
	}
	text := func(rms []remedy.Remedy) []string {
		var out []string
		for _, rm := range rms {
			if rm.Kind == remedy.HelmForce {
				out = append(out, rm.Into.Which+" with "+rm.Snippet)
				continue
			}
			out = append(out, rm.Command.String())
		}
		return out
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, text(conflictRemedies(&tt.r, tt.t))); diff != "" {
				t.Errorf("conflicts' remedies (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.resets, text(resetRemedies(&tt.r, tt.t))); diff != "" {
				t.Errorf("resets' remedies (-want +got):\n%s", diff)
			}
		})
	}
}
