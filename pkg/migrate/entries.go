package migrate

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/pathlang"
)

// EntryChanges are, for each object of r (r.Objects[i]'s), how a client
// dry run would rewrite its managedFields, entry by entry: what the text
// view lists under the object. nil for an object no client dry run
// migrates; empty when the rewrite changes no entry.
func EntryChanges(r *v1alpha1.MigrationReport) [][]ownership.EntryChange {
	out := make([][]ownership.EntryChange, len(r.Objects))
	for i, o := range r.Objects {
		if o.Result == v1alpha1.ResultWouldMigrate && (o.Before != nil || o.After != nil) {
			out[i] = entryChanges(o.Before, o.After)
		}
	}
	return out
}

// entryChanges compares two lists of entries by identity: the entries
// of before in their order (removed or changed), then those new in
// after. Of entries of one identity the last counts; an entry that does
// not decode owns nothing.
func entryChanges(before, after []metav1.ManagedFieldsEntry) []ownership.EntryChange {
	type entry struct {
		owner v1alpha1.Owner
		set   *fieldpath.Set
	}
	index := func(es []metav1.ManagedFieldsEntry) (map[string]entry, []string) {
		m := map[string]entry{}
		var order []string
		for _, e := range es {
			key := e.Manager + "\x00" + string(e.Operation) + "\x00" + e.Subresource + "\x00" + e.APIVersion
			set, err := ownership.DecodeEntry(e)
			if err != nil {
				set = &fieldpath.Set{}
			}
			if _, ok := m[key]; !ok {
				order = append(order, key)
			}
			owner := ownership.OwnerOf(e)
			owner.Time = nil
			m[key] = entry{owner: owner, set: set}
		}
		return m, order
	}
	paths := func(s *fieldpath.Set) []pathlang.Path {
		out := []pathlang.Path{}
		s.Iterate(func(p fieldpath.Path) { out = append(out, pathlang.Path(p.Copy())) })
		return out
	}
	b, bOrder := index(before)
	a, aOrder := index(after)
	out := []ownership.EntryChange{}
	for _, k := range bOrder {
		old := b[k]
		nw, ok := a[k]
		switch {
		case !ok:
			out = append(out, ownership.EntryChange{Owner: old.owner, Change: ownership.EntryRemoved, Owned: old.set.Size()})
		case !old.set.Equals(nw.set):
			out = append(out, ownership.EntryChange{Owner: old.owner, Change: ownership.EntryChanged,
				Lost: paths(old.set.Difference(nw.set)), Gained: paths(nw.set.Difference(old.set))})
		}
	}
	for _, k := range aOrder {
		if _, ok := b[k]; !ok {
			out = append(out, ownership.EntryChange{Owner: a[k].owner, Change: ownership.EntryAdded, Gained: paths(a[k].set)})
		}
	}
	return out
}
