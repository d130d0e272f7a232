package migrate

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
)

// The entries of a rewrite, by identity: removed, changed (paths lost and
// gained), added; the last of two entries of one identity counts; only
// the objects a client dry run would migrate have some.
func TestEntryChanges(t *testing.T) {
	apply, update := metav1.ManagedFieldsOperationApply, metav1.ManagedFieldsOperationUpdate
	before := []metav1.ManagedFieldsEntry{
		entry("gone", update, "v1", `{"f:data":{"f:a":{}}}`),
		entry("kept", apply, "v1", `{"f:data":{"f:b":{},"f:c":{}}}`),
		entry("same", apply, "v1", `{"f:data":{"f:d":{}}}`),
		entry("twice", update, "v1", `{"f:data":{"f:x":{}}}`),
		entry("twice", update, "v1", `{"f:data":{"f:e":{}}}`),
	}
	after := []metav1.ManagedFieldsEntry{
		entry("same", apply, "v1", `{"f:data":{"f:d":{}}}`),
		entry("kept", apply, "v1", `{"f:data":{"f:c":{},"f:f":{}}}`),
		entry("twice", update, "v1", `{"f:data":{"f:e":{}}}`),
		entry("new", apply, "v1", `{"f:data":{"f:a":{}}}`),
	}
	r := &v1alpha1.MigrationReport{Objects: []v1alpha1.ObjectResult{
		{Result: v1alpha1.ResultWouldMigrate, Before: before, After: after},
		{Result: v1alpha1.ResultWouldMigrate, Before: after, After: after},
		{Result: v1alpha1.ResultMigrated, Before: before, After: after},
	}}
	type change struct {
		Who, Change  string
		Owned        int
		Lost, Gained []string
	}
	view := func(cs []ownership.EntryChange) []change {
		out := []change{}
		for _, c := range cs {
			v := change{Who: c.Owner.Manager + " " + string(c.Owner.Operation), Change: string(c.Change), Owned: c.Owned}
			for _, p := range c.Lost {
				v.Lost = append(v.Lost, p.String())
			}
			for _, p := range c.Gained {
				v.Gained = append(v.Gained, p.String())
			}
			if c.Owner.Time != nil {
				t.Errorf("%s: a time", v.Who)
			}
			out = append(out, v)
		}
		return out
	}
	got := EntryChanges(r)
	want := []change{
		{Who: "gone Update", Change: "removed", Owned: 1},
		{Who: "kept Apply", Change: "changed", Lost: []string{".data.b"}, Gained: []string{".data.f"}},
		{Who: "new Apply", Change: "added", Gained: []string{".data.a"}},
	}
	if d := cmp.Diff(want, view(got[0])); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	if got[1] == nil || len(got[1]) != 0 || got[2] != nil {
		t.Errorf("unchanged: %v (want empty, not nil); migrated: %v (want nil)", got[1], got[2])
	}
}
