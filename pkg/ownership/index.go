package ownership

import (
	"fmt"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// OwnerIndex tells which entries own a path, having decoded each entry
// once: asking about every field of an object with thousands of managers
// stays linear in the entries, where Owners for each field would not.
type OwnerIndex struct {
	entries []metav1.ManagedFieldsEntry
	sets    []*fieldpath.Set // nil for the entries not indexed
	// byPath maps each path to the entries that own it when there are
	// more than directLookup sets; with fewer, asking each set (a walk
	// down its tree, no allocation) is cheaper than building the map.
	byPath map[string][]int
}

// directLookup is how many sets Owners asks one by one.
const directLookup = 32

// NewOwnerIndex indexes entries; sel, when not nil, picks the entries
// to index.
func NewOwnerIndex(entries []metav1.ManagedFieldsEntry, sel func(metav1.ManagedFieldsEntry) bool) (*OwnerIndex, error) {
	sets := make([]*fieldpath.Set, len(entries))
	for i, e := range entries {
		if sel != nil && !sel(e) {
			continue
		}
		s, err := DecodeEntry(e)
		if err != nil {
			return nil, fmt.Errorf("managedFields of %s: %w", e.Manager, err)
		}
		sets[i] = s
	}
	return IndexSets(entries, sets), nil
}

// IndexSets indexes entries whose sets are already decoded: sets[i] is
// entries[i]'s, nil for an entry not to index.
func IndexSets(entries []metav1.ManagedFieldsEntry, sets []*fieldpath.Set) *OwnerIndex {
	x := &OwnerIndex{entries: entries, sets: sets}
	n := 0
	for _, s := range sets {
		if s != nil {
			n++
		}
	}
	if n <= directLookup {
		return x
	}
	x.byPath = map[string][]int{}
	for i, s := range sets {
		if s == nil {
			continue
		}
		s.Iterate(func(p fieldpath.Path) {
			k := pathKey(p)
			x.byPath[k] = append(x.byPath[k], i)
		})
	}
	return x
}

// Owners returns the indexed entries whose sets hold p, in their order.
func (x *OwnerIndex) Owners(p fieldpath.Path) []metav1.ManagedFieldsEntry {
	if x.byPath == nil {
		var out []metav1.ManagedFieldsEntry
		for i, s := range x.sets {
			if s != nil && s.Has(p) {
				out = append(out, x.entries[i])
			}
		}
		return out
	}
	idx := x.byPath[pathKey(p)]
	if len(idx) == 0 {
		return nil
	}
	out := make([]metav1.ManagedFieldsEntry, len(idx))
	for i, j := range idx {
		out[i] = x.entries[j]
	}
	return out
}

// EachLeaf calls f once with every path that is a leaf of an indexed
// entry's set, in no particular order; f must copy a path it keeps.
func (x *OwnerIndex) EachLeaf(f func(fieldpath.Path)) {
	if x.byPath == nil {
		leaves := &fieldpath.Set{}
		for _, s := range x.sets {
			if s != nil {
				leaves = leaves.Union(s.Leaves())
			}
		}
		leaves.Iterate(f)
		return
	}
	seen := map[string]bool{}
	for _, s := range x.sets {
		if s == nil {
			continue
		}
		s.Leaves().Iterate(func(p fieldpath.Path) {
			if k := pathKey(p); !seen[k] {
				seen[k] = true
				f(p)
			}
		})
	}
}

// pathKey is a text of p that no other path has: field names are
// length-prefixed (the apiserver's form reads .a.b for a field "a.b" too).
func pathKey(p fieldpath.Path) string {
	var b strings.Builder
	for _, pe := range p {
		if pe.FieldName != nil {
			b.WriteString(strconv.Itoa(len(*pe.FieldName)))
			b.WriteByte(':')
			b.WriteString(*pe.FieldName)
			continue
		}
		b.WriteString(pe.String())
		b.WriteByte(0)
	}
	return b.String()
}
