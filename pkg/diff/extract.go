package diff

import (
	"encoding/base64"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/schema"
	"sigs.k8s.io/structured-merge-diff/v6/typed"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/conflict"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/pathlang"
)

// Selector picks one managedFields entry: a manager name, its
// subresource ("" the main resource) and, when the name has both, its
// operation.
type Selector struct {
	Manager     string
	Subresource string
	// Operation is Apply, Update, or "" for whichever the manager has.
	Operation string
}

// FindEntry returns the entry sel picks in obj, or an error that says
// which entries there are.
func FindEntry(obj *unstructured.Unstructured, sel Selector) (metav1.ManagedFieldsEntry, error) {
	var found []metav1.ManagedFieldsEntry
	var names []string
	for _, e := range obj.GetManagedFields() {
		names = append(names, ownerText(ownership.OwnerOf(e)))
		if e.Manager != sel.Manager || e.Subresource != sel.Subresource {
			continue
		}
		if sel.Operation != "" && !strings.EqualFold(string(e.Operation), sel.Operation) {
			continue
		}
		found = append(found, e)
	}
	name := ownership.ObjectName(obj.GetKind(), obj.GetNamespace(), obj.GetName())
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		what := fmt.Sprintf("manager %q", sel.Manager)
		if sel.Subresource != "" {
			what += " on subresource " + sel.Subresource
		}
		if sel.Operation != "" {
			what += " with operation " + sel.Operation
		}
		hint := ""
		for _, e := range obj.GetManagedFields() {
			if e.Manager == sel.Manager && e.Subresource != sel.Subresource {
				hint = fmt.Sprintf(" (for its entry on /%s, give --subresource %s)", e.Subresource, e.Subresource)
				break
			}
		}
		return metav1.ManagedFieldsEntry{}, &NoEntryError{fmt.Errorf("%s has no managedFields entry of %s%s; it has: %s", name, what, hint, strings.Join(names, ", "))}
	}
	return metav1.ManagedFieldsEntry{}, fmt.Errorf("%s: manager %q has %d entries (Update entries at several apiVersions, or Apply and Update): choose one with --operation", name, sel.Manager, len(found))
}

// withStringData gives back the stringData entries a manager applied:
// the apiserver stores them in data, base64-encoded, so that they are
// not in the object to extract. Applying the extract as that manager
// then changes nothing. restricted is the object restricted to set, which
// it changes; data is the whole object's.
func withStringData(restricted, data map[string]any, set *fieldpath.Set) {
	sd := map[string]any{}
	set.Leaves().Iterate(func(p fieldpath.Path) {
		key, ok := ownership.StringDataKey(p)
		if !ok {
			return
		}
		enc, ok := data[key].(string)
		if !ok {
			return
		}
		if b, err := base64.StdEncoding.DecodeString(enc); err == nil {
			sd[key] = string(b)
		}
	})
	if len(sd) > 0 {
		restricted["stringData"] = sd
	}
}

// NoEntryError says an object has no entry of the manager asked for.
type NoEntryError struct{ Err error }

func (e *NoEntryError) Error() string { return e.Err.Error() }
func (e *NoEntryError) Unwrap() error { return e.Err }

func ownerText(o v1alpha1.Owner) string {
	s := o.Manager + " (" + string(o.Operation)
	if o.Subresource != "" {
		s += ", " + string(o.Subresource)
	}
	return s + ")"
}

// Extractor extracts the entries of one object, each at a cost in the
// size of its entry rather than of the object: extracting every entry of
// an object with thousands of managers stays linear.
type Extractor struct {
	obj        *unstructured.Unstructured
	tc         managedfields.TypeConverter
	restrictor *ownership.Restrictor
}

// NewExtractor returns the Extractor of obj, typed by tc. obj must not
// change while it is used.
func NewExtractor(obj *unstructured.Unstructured, tc managedfields.TypeConverter) *Extractor {
	return &Extractor{obj: obj, tc: tc, restrictor: ownership.NewRestrictor(obj.Object)}
}

// Extract returns the apply configuration of entry e: the fields it owns
// in obj, with their values, and the object's identity; what
// managedfields.ExtractInto computes (the typed object's ExtractItems over
// the entry's leaves), for Update entries too. obj must be at the entry's
// apiVersion, as tc types it.
func Extract(obj *unstructured.Unstructured, tc managedfields.TypeConverter, e metav1.ManagedFieldsEntry) (*unstructured.Unstructured, error) {
	return NewExtractor(obj, tc).Extract(e)
}

// Extract returns the apply configuration of entry e, as the function
// Extract does. Only the part of the object that e reaches is typed and
// walked.
func (x *Extractor) Extract(e metav1.ManagedFieldsEntry) (*unstructured.Unstructured, error) {
	obj, tc := x.obj, x.tc
	name := ownership.ObjectName(obj.GetKind(), obj.GetNamespace(), obj.GetName())
	if e.APIVersion != "" && e.APIVersion != obj.GetAPIVersion() {
		return nil, fmt.Errorf("%s: %s recorded its fields at %s, the object was read at %s", name, e.Manager, e.APIVersion, obj.GetAPIVersion())
	}
	set, err := ownership.DecodeEntry(e)
	if err != nil {
		return nil, fmt.Errorf("%s: managedFields of %s: %w", name, e.Manager, err)
	}
	restricted := &unstructured.Unstructured{Object: x.restrictor.Restrict(set)}
	if obj.GetAPIVersion() == "v1" && obj.GetKind() == "Secret" {
		data, _ := obj.Object["data"].(map[string]any)
		withStringData(restricted.Object, data, set)
	}
	tv, err := tc.ObjectToTyped(restricted, typed.AllowDuplicates)
	if err != nil {
		return nil, fmt.Errorf("%s: typing the object: %w", name, err)
	}
	// An Update entry can own an item's field without its key (kubectl
	// set image owns a container's image, not its name), and an item
	// without its key does not apply: its extract gets the key fields of
	// the items it reaches. An applier owns the keys it applied; adding
	// a defaulted key (a port's protocol) would change what it owns.
	var opts []typed.ExtractItemsOption
	if e.Operation != metav1.ManagedFieldsOperationApply {
		opts = append(opts, typed.WithAppendKeyFields())
	}
	u, ok := tv.ExtractItems(set.Leaves(), opts...).AsValue().Unstructured().(map[string]any)
	if !ok || u == nil {
		u = map[string]any{}
	}
	out := &unstructured.Unstructured{Object: u}
	out.SetAPIVersion(obj.GetAPIVersion())
	out.SetKind(obj.GetKind())
	out.SetName(obj.GetName())
	if ns := obj.GetNamespace(); ns != "" {
		out.SetNamespace(ns)
	}
	if conflict.IsBuiltin(obj.GroupVersionKind()) {
		ownedZeroes(out, tv, set)
	}
	return out, nil
}

// ownedZeroes: a built-in object's Go type leaves out a scalar field's
// zero value (omitempty), so the owner of a field it set to "" (or 0, or
// false) has no value in the object. The extract sets the zero value the
// schema declares back, as the owner sent it: applied, it keeps the
// ownership. A map's key is not a field: a map keeps its "" values, so
// an owned key it lacks is stale and stays out.
func ownedZeroes(out *unstructured.Unstructured, tv *typed.TypedValue, set *fieldpath.Set) {
	set.Leaves().Iterate(func(p fieldpath.Path) {
		if _, ok := pathlang.Lookup(out.Object, p); ok {
			return
		}
		zero, ok := zeroOf(tv.Schema(), tv.TypeRef(), p)
		if !ok {
			return
		}
		// The structs on the way may be missing too (an owner of the
		// zero value alone); the list items it owns are in the extract.
		for i := 1; i < len(p); i++ {
			if p[i].FieldName == nil {
				if _, ok := pathlang.Lookup(out.Object, p[:i+1]); !ok {
					return // a stale item
				}
			}
		}
		var cur any = out.Object
		for _, pe := range p[:len(p)-1] {
			if pe.FieldName == nil {
				cur, _ = pathlang.LookupElement(cur, pe)
				continue
			}
			m, _ := cur.(map[string]any)
			if m == nil {
				return
			}
			if m[*pe.FieldName] == nil {
				m[*pe.FieldName] = map[string]any{}
			}
			cur = m[*pe.FieldName]
		}
		if m, _ := cur.(map[string]any); m != nil {
			m[*p[len(p)-1].FieldName] = zero
		}
	})
}

// zeroOf is the zero value of the scalar struct field p names in the
// schema, false when p names no such field (a map's key, a list item).
func zeroOf(s *schema.Schema, tr schema.TypeRef, p fieldpath.Path) (any, bool) {
	for _, pe := range p {
		atom, ok := s.Resolve(tr)
		switch {
		case !ok:
			return nil, false
		case pe.FieldName != nil && atom.Map != nil:
			f, ok := atom.FindField(*pe.FieldName)
			if !ok {
				return nil, false
			}
			tr = f.Type
		case pe.FieldName == nil && atom.List != nil:
			tr = atom.List.ElementType
		default:
			return nil, false
		}
	}
	atom, ok := s.Resolve(tr)
	if !ok || atom.Scalar == nil || p[len(p)-1].FieldName == nil {
		return nil, false
	}
	switch *atom.Scalar {
	case schema.String:
		return "", true
	case schema.Numeric:
		return int64(0), true
	case schema.Boolean:
		return false, true
	}
	return nil, false
}
