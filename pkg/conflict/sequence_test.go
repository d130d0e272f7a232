package conflict_test

import (
	"testing"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/conflict"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/pathlang"
)

// TestKubectlSequenceRetainsNoAnnotation: kubectl apply --server-side on a
// client-side-applied object writes the last-applied annotation itself,
// as "kubectl-last-applied", a manager the object does not have yet; the
// annotation is kubectl's bookkeeping, not a field the manifest dropped
// that another manager keeps.
func TestKubectlSequenceRetainsNoAnnotation(t *testing.T) {
	s := &state{}
	update{Manager: "kubectl-client-side-apply", Create: lastApplied("nginx:1")}.Run(t, s)
	r, err := conflict.Simulate(conflict.Input{Live: s.Live, Applied: manifest(t, webWith("nginx:2")), FieldManager: "kubectl",
		Schema: conflict.BuiltinSchema(), HasStatus: true, KubectlUpgrade: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.KubectlUpgrade) != 1 {
		t.Fatalf("the sequence was not followed: %+v", r.KubectlUpgrade)
	}
	for _, ret := range r.Retained {
		if ret.Path.APIServerString() == pathlang.Path(ownership.LastAppliedPath).APIServerString() {
			t.Errorf("the last-applied annotation is listed as retained by %+v", ret.Owners)
		}
	}
}
