package fight

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-ssa/kubectl-ssa/internal/scenario"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
)

// TestMoves: what changes hands between two versions, read from the
// managedFields the apiserver's field manager writes.
func TestMoves(t *testing.T) {
	gitops := scenario.Apply{Manager: "gitops", Manifest: gitopsWeb}
	tests := []struct {
		name string
		op   scenario.Op
		want []string // path: from -> to
	}{
		{"kubectl scale takes replicas", scenario.Update{Manager: "kubectl", Subresource: "scale", Mutate: scenario.Set(int64(4), "spec", "replicas")},
			[]string{".spec.replicas: gitops -> kubectl"}},
		{"a forced apply of another value takes it", scenario.Apply{Manager: "ci", Force: true, Manifest: strings.Replace(gitopsWeb, "nginx:1", "nginx:2", 1)},
			[]string{`.spec.template.spec.containers[name="web"].image: gitops -> ci`}},
		{"an apply of the same value shares it", scenario.Apply{Manager: "ci", Manifest: gitopsWeb}, nil},
		{"an update of the same value takes nothing", scenario.Update{Manager: "kubectl-edit", Mutate: scenario.Set(int64(2), "spec", "replicas")}, nil},
		{"a new field is no move", scenario.Update{Manager: "kubectl-label", Mutate: scenario.Set("x", "metadata", "labels", "team")}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := (&scenario.State{}).Run(t, gitops)
			before := s.Live.DeepCopy()
			s.Run(t, tt.op)
			moves, err := Moves(before.GetManagedFields(), s.Live.GetManagedFields())
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, m := range moves {
				got = append(got, m.Path.String()+": "+m.From[0].Manager+" -> "+m.To[0].Manager)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("moves (-want +got):\n%s", diff)
			}
		})
	}
}

// TestMoved: an applier and an autoscaler taking replicas from each other
// are a fight at the third move, read from managedFields alone; the
// tracker forgets the path once its moves are older than the window.
func TestMoved(t *testing.T) {
	s := (&scenario.State{}).Run(t, scenario.Apply{Manager: "gitops", Manifest: gitopsWeb})
	gitops := scenario.Apply{Manager: "gitops", Manifest: gitopsWeb, Force: true}
	hpa := scenario.Update{Manager: "autoscaler", Subresource: "scale", Mutate: scenario.Set(int64(5), "spec", "replicas")}
	tr := New(Options{MinFlips: 3, Window: time.Minute})
	start := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	var flips []int
	for i, op := range []scenario.Op{hpa, gitops, hpa, gitops} {
		before := s.Live.DeepCopy()
		s.Run(t, op)
		moves, err := Moves(before.GetManagedFields(), s.Live.GetManagedFields())
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range tr.Moved(ownership.RefOf(s.Live), moves, start.Add(time.Duration(i)*5*time.Second)) {
			if f.Path.String() != ".spec.replicas" || len(f.Managers) != 2 {
				t.Errorf("fight %+v", f)
			}
			flips = append(flips, f.Flips)
		}
	}
	if diff := cmp.Diff([]int{3, 4}, flips); diff != "" {
		t.Errorf("fights at flips (-want +got):\n%s", diff)
	}
	if !tr.Seen() || len(tr.objects) != 1 {
		t.Fatalf("tracker holds %d objects, want 1", len(tr.objects))
	}
	tr.Moved(v1alpha1.ObjectRef{UID: "other"}, nil, start.Add(3*time.Minute))
	if len(tr.objects) != 0 {
		t.Errorf("tracker still holds %d objects after the window", len(tr.objects))
	}
}
