package conflict

import (
	"encoding/json"
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/typed"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/pathlang"
)

// ResultFunc completes a prediction into the object the server stores
// (diff.Result): the defaults filled in, and the paths whose values are
// not known here.
type ResultFunc func(*Simulation) (*unstructured.Unstructured, []fieldpath.Path, error)

// bookkeeping are the metadata the server sets on every write, which no
// prediction can know (managedFields are compared on their own; the
// generation is the server's counter of spec changes).
var bookkeeping = []fieldpath.Path{
	fieldpath.MakePathOrDie("metadata", "generation"),
	fieldpath.MakePathOrDie("metadata", "uid"),
	fieldpath.MakePathOrDie("metadata", "resourceVersion"),
	fieldpath.MakePathOrDie("metadata", "creationTimestamp"),
	fieldpath.MakePathOrDie("metadata", "managedFields"),
	fieldpath.MakePathOrDie("metadata", "selfLink"),
}

// objectDifferences lists, one line a path, where the server's object
// differs from the predicted one, bookkeeping and the paths whose values
// are not known (unknown) aside. A Secret's values are not printed.
func objectDifferences(tc managedfields.TypeConverter, server, predicted *unstructured.Unstructured, unknown []fieldpath.Path) ([]string, error) {
	st, err := tc.ObjectToTyped(server, typed.AllowDuplicates)
	if err != nil {
		return nil, fmt.Errorf("typing the server's object: %w", err)
	}
	pt, err := tc.ObjectToTyped(predicted, typed.AllowDuplicates)
	if err != nil {
		return nil, fmt.Errorf("typing the predicted object: %w", err)
	}
	cmp, err := pt.Compare(st)
	if err != nil {
		return nil, fmt.Errorf("comparing with the server's object: %w", err)
	}
	skip := append(append([]fieldpath.Path{}, bookkeeping...), unknown...)
	secret := ownership.IsSecret(server.GetAPIVersion(), server.GetKind())
	var out []string
	add := func(what string, set *fieldpath.Set) {
		set.Leaves().Iterate(func(p fieldpath.Path) {
			var below []fieldpath.Path
			for _, s := range skip {
				if hasPrefix(p, s) {
					return
				}
				if len(s) > len(p) && hasPrefix(s, p) {
					below = append(below, s)
				}
			}
			if len(below) > 0 && sameWithout(server, predicted, p, below) {
				// An atomic value (a Job's selector) differs only in
				// what is not known here.
				return
			}
			sv, sok := pathlang.Lookup(server.Object, p)
			pv, pok := pathlang.Lookup(predicted.Object, p)
			line := pathlang.Path(p).String() + ": " + what
			switch {
			case secret:
			case sok && pok:
				line += fmt.Sprintf(" (server %s, predicted %s)", jsonValue(sv), jsonValue(pv))
			case sok:
				line += fmt.Sprintf(" (server %s)", jsonValue(sv))
			case pok:
				line += fmt.Sprintf(" (predicted %s)", jsonValue(pv))
			}
			out = append(out, line)
		})
	}
	add("set by the server, not predicted", cmp.Added)
	add("predicted, not in the server's object", cmp.Removed)
	add("the server's value differs", cmp.Modified)
	sort.Strings(out)
	return out, nil
}

// sameWithout tells whether a and b hold the same value at p once the
// paths drop (below p) are taken out of both.
func sameWithout(a, b *unstructured.Unstructured, p fieldpath.Path, drop []fieldpath.Path) bool {
	a, b = a.DeepCopy(), b.DeepCopy()
	for _, d := range drop {
		if _, err := pathlang.Remove(a.Object, d); err != nil {
			return false
		}
		if _, err := pathlang.Remove(b.Object, d); err != nil {
			return false
		}
	}
	av, _ := pathlang.Lookup(a.Object, p)
	bv, _ := pathlang.Lookup(b.Object, p)
	// Taking a path out empties the maps that held it: an empty map and
	// none are the same here.
	return jsonValue(pruneEmpty(av)) == jsonValue(pruneEmpty(bv))
}

// pruneEmpty drops empty maps below v (and v itself: nil).
func pruneEmpty(v any) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	out := map[string]any{}
	for k, c := range m {
		if c = pruneEmpty(c); c != nil {
			out[k] = c
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// hasPrefix tells whether p is prefix or below it.
func hasPrefix(p, prefix fieldpath.Path) bool {
	if len(p) < len(prefix) {
		return false
	}
	return p[:len(prefix)].Equals(prefix)
}

func jsonValue(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	const most = 120
	if len(b) > most {
		return string(b[:most]) + "…"
	}
	return string(b)
}
