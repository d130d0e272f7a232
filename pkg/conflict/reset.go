package conflict

import (
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/value"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/defaults"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/pathlang"
)

// defaultsFor returns what knows the defaults of the applied kind, or a
// warning saying that nothing does.
func defaultsFor(in Input, gvk schema.GroupVersionKind) (defaults.Source, string) {
	if !in.CRD {
		if t, ok := defaults.BuiltinFor(gvk, in.ServerMinor); ok {
			return t, ""
		}
		return nil, fmt.Sprintf("the defaults of %s are not known here (kubectl-ssa knows those of %s): a removed field that has a default comes back with it", gvk, defaults.BuiltinSource())
	}
	if s, ok := in.Schema.(*Schema); ok {
		if types, tr, ok := s.TypeOf(gvk); ok {
			return defaults.Structural{Schema: types, Type: tr}, ""
		}
	}
	return nil, fmt.Sprintf("no schema with the defaults of %s: a removed field that has a schema default comes back with it", gvk)
}

// fromStringData tells whether p is a Secret's .data, or a key of it,
// that the applied stringData sets: the apiserver writes stringData into
// data, so the apply neither removes nor resets it.
func fromStringData(applied *unstructured.Unstructured, p fieldpath.Path) bool {
	if applied == nil || !ownership.IsSecret(applied.GetAPIVersion(), applied.GetKind()) || len(p) == 0 || p[0].FieldName == nil || *p[0].FieldName != "data" {
		return false
	}
	sd, _, _ := unstructured.NestedMap(applied.Object, "stringData")
	switch {
	case len(p) == 1:
		return len(sd) > 0
	case len(p) == 2 && p[1].FieldName != nil:
		_, ok := sd[*p[1].FieldName]
		return ok
	}
	return false
}

// classifyRemovals sorts the paths an apply drops and the result lacks
// into removed, reset and maybe-reset ones. removed are all such paths
// (parents and children); only the top-most of each is classified, and a
// reset parent's removed children that its default lacks stay removed.
func classifyRemovals(r *v1alpha1.ConflictReport, in Input, live, res *unstructured.Unstructured, removed []fieldpath.Path) {
	var src defaults.Source
	if len(removed) > 0 {
		var warning string
		src, warning = defaultsFor(in, res.GroupVersionKind())
		if warning != "" {
			r.Warnings = append(r.Warnings, warning)
		}
	}
	var resetPaths, gone []fieldpath.Path
	var resetValues []any
	for _, p := range topmostPaths(removed) {
		if fromStringData(in.Applied, p) {
			continue
		}
		ans := defaults.Answer{Outcome: defaults.Removed}
		kept := false
		if !in.CRD {
			if v, ok, known := defaults.Kept(res.GroupVersionKind(), p, live.Object, res.Object); ok {
				kept, ans = true, defaults.Answer{Outcome: defaults.Reset, Value: v}
				if !known {
					ans = defaults.Answer{Outcome: defaults.Depends, Reason: "what the apiserver allocates"}
				}
			}
		}
		if src != nil && !kept {
			ans = removal(src, res.Object, p)
		}
		switch ans.Outcome {
		case defaults.Reset:
			liveValue, _ := pathlang.Lookup(live.Object, p)
			r.Reset = append(r.Reset, v1alpha1.Reset{Path: pathlang.Path(p), Value: ans.Value, Unchanged: defaults.SameJSON(liveValue, ans.Value), Kept: kept, PathElements: p})
			resetPaths, resetValues = append(resetPaths, p), append(resetValues, ans.Value)
		case defaults.Depends:
			r.MaybeReset = append(r.MaybeReset, v1alpha1.MaybeReset{Path: pathlang.Path(p), DependsOn: ans.Reason, PathElements: p})
		default:
			gone = append(gone, p)
		}
	}
	// Children of a reset field that its default does not hold are gone.
	for i, rp := range resetPaths {
		for _, p := range removed {
			if len(p) > len(rp) && p[:len(rp)].Equals(rp) {
				if _, ok := pathlang.Lookup(resetValues[i], p[len(rp):]); !ok {
					gone = append(gone, p)
				}
			}
		}
	}
	gone = topmostPaths(gone)
	sort.Slice(gone, func(i, j int) bool { return gone[i].Compare(gone[j]) < 0 })
	for _, p := range gone {
		r.Removed = append(r.Removed, pathlang.Path(p))
	}
}

func uniqueStrings(in []string) []string {
	seen := map[string]bool{}
	out := in[:0]
	for _, s := range in {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// removal asks src about p. When the apply leaves a parent of p empty,
// the field manager drops that parent too: p then comes back only inside
// the parent's default.
func removal(src defaults.Source, obj map[string]any, p fieldpath.Path) defaults.Answer {
	anc := ancestorsOf(obj, p)
	for k := 1; k < len(p); k++ {
		if _, ok := pathlang.Lookup(obj, p[:k]); ok {
			continue
		}
		if item, ok := defaultKeyedItem(src, p[:k], anc[:k]); ok {
			anc[k] = item
			continue
		}
		a := src.Removal(p[:k], anc[:k])
		if a.Outcome != defaults.Reset {
			return a
		}
		v, ok := pathlang.Lookup(a.Value, p[k:])
		if !ok || v == nil {
			return defaults.Answer{Outcome: defaults.Removed}
		}
		return defaults.Answer{Outcome: defaults.Reset, Value: v}
	}
	return src.Removal(p, anc)
}

// defaultKeyedItem finds the list item at p (p ends in a key; anc are
// the values at p's proper prefixes) when the item leaves out a key
// field that its default fills: the field manager keys a Service port
// without a protocol as protocol=TCP, and the apiserver defaults the
// field back, so the item is there.
func defaultKeyedItem(src defaults.Source, p fieldpath.Path, anc []any) (any, bool) {
	last := p[len(p)-1]
	if last.Key == nil {
		return nil, false
	}
	items, _ := anc[len(p)-1].([]any)
	for _, it := range items {
		m, ok := it.(map[string]any)
		if ok && keyMatchesDefaulted(src, m, p, append(append([]any{}, anc...), m)) {
			return m, true
		}
	}
	return nil, false
}

// keyMatchesDefaulted tells whether item has p's key, its absent key
// fields taking their defaults.
func keyMatchesDefaulted(src defaults.Source, item map[string]any, p fieldpath.Path, anc []any) bool {
	for _, f := range *p[len(p)-1].Key {
		v, ok := item[f.Name]
		if !ok {
			name := f.Name
			a := src.Removal(append(p.Copy(), fieldpath.PathElement{FieldName: &name}), anc)
			if a.Outcome != defaults.Reset {
				return false
			}
			v = a.Value
		}
		if !value.Equals(f.Value, value.NewValueInterface(v)) {
			return false
		}
	}
	return true
}

// topmostPaths drops the paths below another one of the list.
func topmostPaths(paths []fieldpath.Path) []fieldpath.Path {
	var out []fieldpath.Path
	for _, p := range paths {
		covered := false
		for _, q := range paths {
			if len(q) < len(p) && p[:len(q)].Equals(q) {
				covered = true
				break
			}
		}
		if !covered {
			out = append(out, p)
		}
	}
	return out
}

// ancestorsOf returns the values at p's proper prefixes in obj (nil where
// missing).
func ancestorsOf(obj map[string]any, p fieldpath.Path) []any {
	out := make([]any, len(p))
	for i := range p {
		out[i], _ = pathlang.Lookup(obj, p[:i])
	}
	return out
}
