package diff

import (
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
)

// owners tells who owns a path before and after the apply, from the two
// ownership analyses Compute makes anyway (for the view): their tries
// are an index of every manager's set, decoded once.
type owners struct {
	before, after *ownership.Report // before nil: no live object
	// ids number the identities (manager, operation, subresource) of
	// both reports' owners, so that most owner lists compare without
	// building a multiset.
	idsBefore, idsAfter []int
}

func newOwners(before, after *ownership.Report) *owners {
	o := &owners{before: before, after: after}
	ids := map[string]int{}
	number := func(r *ownership.Report) []int {
		if r == nil {
			return nil
		}
		out := make([]int, len(r.Owners))
		for i, ow := range r.Owners {
			k := ow.Identity()
			id, ok := ids[k]
			if !ok {
				id = len(ids)
				ids[k] = id
			}
			out[i] = id
		}
		return out
	}
	o.idsBefore, o.idsAfter = number(before), number(after)
	return o
}

// at returns the owners of p in r (never nil: an empty list marshals as
// []).
func at(r *ownership.Report, p fieldpath.Path) []v1alpha1.Owner {
	out := []v1alpha1.Owner{}
	if r == nil {
		return out
	}
	if n := r.Tree.Find(p); n != nil {
		for _, i := range n.Owners {
			out = append(out, r.Owners[i])
		}
	}
	return out
}

// same tells whether the owners of two nodes (nil: none) before and after
// are the same identities, as v1alpha1.SameOwners.
func (o *owners) same(b, a *ownership.Node) bool {
	var bo, ao []int
	if b != nil {
		bo = b.Owners
	}
	if a != nil {
		ao = a.Owners
	}
	if len(bo) != len(ao) {
		return false
	}
	equal := true
	for i := range bo {
		equal = equal && o.idsBefore[bo[i]] == o.idsAfter[ao[i]]
	}
	if equal {
		return true
	}
	var p fieldpath.Path
	if b != nil {
		p = b.Path
	} else {
		p = a.Path
	}
	return v1alpha1.SameOwners(at(o.before, p), at(o.after, p))
}

// eachLeaf calls f with every path that is a leaf of some manager's set
// before or after (a path the manager owns with nothing of its own below
// it), once, in no particular order, with its nodes before and after
// (nil where the trie has none). f must copy a path it keeps.
func (o *owners) eachLeaf(f func(p fieldpath.Path, b, a *ownership.Node)) {
	w := leafWalk{f: f}
	var b, a *ownership.Node
	if o.before != nil {
		b, w.seen[0] = o.before.Tree, make([]int, len(o.before.Owners))
	}
	if o.after != nil {
		a, w.seen[1] = o.after.Tree, make([]int, len(o.after.Owners))
	}
	w.walk(b, a)
}

// leafWalk walks two tries together, in path order. A node is a leaf of
// owner i when no node below it is owned by i: seen counts, per trie and
// owner, the nodes owned so far, so that a count unchanged by the walk
// below a node says so without a set per node.
type leafWalk struct {
	seen  [2][]int
	stack []int
	f     func(fieldpath.Path, *ownership.Node, *ownership.Node)
}

func (w *leafWalk) walk(b, a *ownership.Node) {
	base := len(w.stack)
	nodes := [2]*ownership.Node{b, a}
	for k, n := range nodes {
		if n == nil {
			continue
		}
		for _, i := range n.Owners {
			w.seen[k][i]++
			w.stack = append(w.stack, w.seen[k][i])
		}
	}
	var bc, ac []*ownership.Node
	if b != nil {
		bc = b.Children
	}
	if a != nil {
		ac = a.Children
	}
	for i, j := 0, 0; i < len(bc) || j < len(ac); {
		d := 0
		switch {
		case i == len(bc):
			d = 1
		case j == len(ac):
			d = -1
		default:
			d = bc[i].PE.Compare(ac[j].PE)
		}
		switch {
		case d < 0:
			w.walk(bc[i], nil)
			i++
		case d > 0:
			w.walk(nil, ac[j])
			j++
		default:
			w.walk(bc[i], ac[j])
			i++
			j++
		}
	}
	leaf, s := false, base
	for k, n := range nodes {
		if n == nil {
			continue
		}
		for _, i := range n.Owners {
			leaf = leaf || w.seen[k][i] == w.stack[s]
			s++
		}
	}
	w.stack = w.stack[:base]
	if !leaf {
		return
	}
	if b != nil {
		w.f(b.Path, b, a)
	} else {
		w.f(a.Path, b, a)
	}
}
