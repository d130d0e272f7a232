package fight

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/pathlang"
)

// Move is a field that changed hands between two versions of an object:
// none of the entries that owned it before owns it now. The apiserver's
// field manager moves a field so only when a write changed its value (an
// Update that changes it, a forced Apply of another value); an Apply of
// the same value shares it, and an Update of the same value takes
// nothing. So a Move is a flip, read from managedFields alone: metadata
// is enough, no value is read.
type Move struct {
	Path pathlang.Path
	// From are the entries that owned it, To those that own it now.
	From, To []metav1.ManagedFieldsEntry
}

// Moves are the fields that changed hands from old to cur (the
// managedFields of two versions of one object), in path order. A field
// that nobody owned before, or that one of its owners kept, is not one.
func Moves(old, cur []metav1.ManagedFieldsEntry) ([]Move, error) {
	oldSets, err := decodeAll(old)
	if err != nil {
		return nil, err
	}
	curSets, err := decodeAll(cur)
	if err != nil {
		return nil, err
	}
	before := ownership.IndexSets(old, oldSets)
	after := ownership.IndexSets(cur, curSets)
	gained := &fieldpath.Set{}
	for i, e := range cur {
		had := &fieldpath.Set{}
		for j, o := range old {
			if ownership.SameIdentity(e, o) {
				had = oldSets[j]
			}
		}
		gained = gained.Union(curSets[i].Leaves().Difference(had))
	}
	var out []Move
	gained.Iterate(func(p fieldpath.Path) {
		from := before.Owners(p)
		if len(from) == 0 {
			return
		}
		to := after.Owners(p)
		for _, f := range from {
			for _, t := range to {
				if ownership.SameIdentity(f, t) {
					return
				}
			}
		}
		out = append(out, Move{Path: pathlang.Path(p.Copy()), From: from, To: to})
	})
	return out, nil
}

func decodeAll(entries []metav1.ManagedFieldsEntry) ([]*fieldpath.Set, error) {
	sets := make([]*fieldpath.Set, len(entries))
	for i, e := range entries {
		s, err := ownership.DecodeEntry(e)
		if err != nil {
			return nil, err
		}
		sets[i] = s
	}
	return sets, nil
}

// Moved takes the fields that changed hands in one write of the object
// ref names (Moves), read at now, and returns the fights they started or
// carried on. Unlike Observe, it keeps nothing of an object until one of
// its fields moves, and forgets a field once its moves are older than the
// window: its memory grows with the fields changing hands, not with the
// objects. The fights it returns have no values (none was read).
func (t *Tracker) Moved(ref v1alpha1.ObjectRef, moves []Move, now time.Time) []v1alpha1.Fight {
	t.sweep(now)
	uid := types.UID(ref.UID)
	var out []v1alpha1.Fight
	for _, m := range moves {
		key := m.Path.String()
		paths := t.objects[uid]
		if paths == nil {
			paths = map[string]*pathState{}
			t.objects[uid] = paths
		}
		from, to := ownersOf(owned(m.From)), ownersOf(owned(m.To))
		st := paths[key]
		if st == nil {
			st = &pathState{path: m.Path}
			paths[key] = st
		}
		st.flips = append(st.flips, flip{at: now, from: from, to: to})
		st.own = to
		st.prune(now, t.o.Window)
		if !st.fighting(t.o.MinFlips) {
			continue
		}
		t.fought[ref.UID+"\x00"+key] = true
		f := st.fight(ref, now)
		f.Values = []any{}
		out = append(out, f)
	}
	return out
}

func owned(entries []metav1.ManagedFieldsEntry) []v1alpha1.Owner {
	out := make([]v1alpha1.Owner, len(entries))
	for i, e := range entries {
		out[i] = ownership.OwnerOf(e)
	}
	return out
}

// sweep forgets, once per window, the fields whose last move is older
// than the window.
func (t *Tracker) sweep(now time.Time) {
	if now.Sub(t.swept) < t.o.Window {
		return
	}
	t.swept = now
	for uid, paths := range t.objects {
		for key, st := range paths {
			if n := len(st.flips); n > 0 && now.Sub(st.flips[n-1].at) > t.o.Window {
				delete(paths, key)
			}
		}
		if len(paths) == 0 {
			delete(t.objects, uid)
		}
	}
}
