package ownership

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/pathlang"
)

// This file edits managedFields entries in memory, the way the tools that
// rewrite ownership need to: it never touches field values.

// SameIdentity tells whether two entries are the same manager.
func SameIdentity(a, b metav1.ManagedFieldsEntry) bool {
	if a.Manager != b.Manager || a.Operation != b.Operation || a.Subresource != b.Subresource {
		return false
	}
	// An applier is one manager whatever apiVersion it applied at; an
	// Update manager is one per apiVersion.
	return a.Operation == metav1.ManagedFieldsOperationApply || a.APIVersion == b.APIVersion
}

// EncodeEntry writes set into the entry's FieldsV1.
func EncodeEntry(e *metav1.ManagedFieldsEntry, set *fieldpath.Set) error {
	b, err := set.ToJSON()
	if err != nil {
		return err
	}
	e.FieldsType = "FieldsV1"
	e.FieldsV1 = metav1.NewFieldsV1(string(b))
	return nil
}

// RemovePaths takes paths, and everything below them, out of the entries
// sel selects. Entries left owning nothing are dropped, as the apiserver
// drops them. It returns the new entries and the paths it removed.
func RemovePaths(entries []metav1.ManagedFieldsEntry, sel func(metav1.ManagedFieldsEntry) bool, paths *fieldpath.Set) ([]metav1.ManagedFieldsEntry, *fieldpath.Set, error) {
	out := make([]metav1.ManagedFieldsEntry, 0, len(entries))
	removed := &fieldpath.Set{}
	for _, e := range entries {
		if !sel(e) {
			out = append(out, e)
			continue
		}
		set, err := DecodeEntry(e)
		if err != nil {
			return nil, nil, err
		}
		kept := set.RecursiveDifference(paths)
		removed = removed.Union(set.Difference(kept))
		if kept.Empty() {
			continue
		}
		e = *e.DeepCopy()
		if err := EncodeEntry(&e, kept); err != nil {
			return nil, nil, err
		}
		out = append(out, e)
	}
	return out, removed, nil
}

// AddPaths adds paths to the entry with the identity of id, creating it
// when the object has none.
func AddPaths(entries []metav1.ManagedFieldsEntry, id metav1.ManagedFieldsEntry, paths *fieldpath.Set) ([]metav1.ManagedFieldsEntry, error) {
	out := make([]metav1.ManagedFieldsEntry, 0, len(entries)+1)
	found := false
	for _, e := range entries {
		if !found && SameIdentity(e, id) {
			set, err := DecodeEntry(e)
			if err != nil {
				return nil, err
			}
			e = *e.DeepCopy()
			if err := EncodeEntry(&e, set.Union(paths)); err != nil {
				return nil, err
			}
			found = true
		}
		out = append(out, e)
	}
	if !found {
		e := *id.DeepCopy()
		if err := EncodeEntry(&e, paths); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

// Owners returns the entries whose sets hold path. To ask about many
// paths, make an OwnerIndex once.
func Owners(entries []metav1.ManagedFieldsEntry, p fieldpath.Path) ([]metav1.ManagedFieldsEntry, error) {
	var out []metav1.ManagedFieldsEntry
	for _, e := range entries {
		s, err := DecodeEntry(e)
		if err != nil {
			return nil, err
		}
		if s.Has(p) {
			out = append(out, e)
		}
	}
	return out, nil
}

// SecretPath tells whether a path of a Secret holds a secret value: its
// data, stringData, and the last-applied annotation (client-side apply
// copies the whole Secret into it).
func SecretPath(p fieldpath.Path) bool {
	if len(p) == 0 || p[0].FieldName == nil {
		return false
	}
	switch *p[0].FieldName {
	case "data", "stringData":
		return true
	}
	return len(p) >= 3 && p[:3].Equals(fieldpath.MakePathOrDie("metadata", "annotations", LastAppliedAnnotation))
}

// StringDataKey returns KEY for a Secret's .stringData.KEY: a write-only
// field the apiserver stores as .data.KEY, base64-encoded.
func StringDataKey(p fieldpath.Path) (string, bool) {
	if len(p) != 2 || p[0].FieldName == nil || *p[0].FieldName != "stringData" || p[1].FieldName == nil {
		return "", false
	}
	return *p[1].FieldName, true
}

// StoredAs is where the apiserver keeps a Secret's .stringData.KEY:
// .data.KEY (stringData is write-only: the live object has no value
// there). Nil for every other field and object.
func StoredAs(apiVersion, kind string, p fieldpath.Path) pathlang.Path {
	if !IsSecret(apiVersion, kind) {
		return nil
	}
	key, ok := StringDataKey(p)
	if !ok {
		return nil
	}
	return pathlang.Path(fieldpath.MakePathOrDie("data", key))
}

// Union is the set of paths the entries sel selects own together.
func Union(entries []metav1.ManagedFieldsEntry, sel func(metav1.ManagedFieldsEntry) bool) (*fieldpath.Set, error) {
	var sets []*fieldpath.Set
	for _, e := range entries {
		if !sel(e) {
			continue
		}
		s, err := DecodeEntry(e)
		if err != nil {
			return nil, err
		}
		sets = append(sets, s)
	}
	return UnionAll(sets), nil
}

// UnionAll is the union of sets, merged in pairs: a union of two sets
// costs the size of both, so adding thousands of sets one by one to a
// growing union would cost their number times the union's size.
func UnionAll(sets []*fieldpath.Set) *fieldpath.Set {
	if len(sets) == 0 {
		return &fieldpath.Set{}
	}
	for len(sets) > 1 {
		next := make([]*fieldpath.Set, 0, (len(sets)+1)/2)
		for i := 0; i < len(sets); i += 2 {
			if i+1 == len(sets) {
				next = append(next, sets[i])
				continue
			}
			next = append(next, sets[i].Union(sets[i+1]))
		}
		sets = next
	}
	return sets[0]
}

// RedactValue returns v, the value at path p of a Secret, with the secret
// values in it replaced by Redacted: all of it at or below data,
// stringData or the last-applied annotation; the values it holds of
// those when p is above them (.metadata, .metadata.annotations). v itself
// is not changed.
func RedactValue(p fieldpath.Path, v any) any {
	if v == nil {
		return nil
	}
	if SecretPath(p) {
		return v1alpha1.Redacted
	}
	meta := fieldpath.MakePathOrDie("metadata")
	annotations := fieldpath.MakePathOrDie("metadata", "annotations")
	switch {
	case p.Equals(meta):
		m, ok := v.(map[string]any)
		if !ok {
			return v
		}
		c := make(map[string]any, len(m))
		for k, x := range m {
			c[k] = x
		}
		obj := map[string]any{"metadata": c}
		redactSecret(obj)
		return obj["metadata"]
	case p.Equals(annotations):
		obj := map[string]any{"metadata": map[string]any{"annotations": v}}
		redactSecret(obj)
		return obj["metadata"].(map[string]any)["annotations"]
	}
	return v
}
