package ownership

import (
	"bytes"
	"fmt"
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// Options tune Analyze.
type Options struct {
	// ShowSecretValues keeps the values of Secret data, stringData and the
	// last-applied annotation of Secrets; by default they are redacted.
	ShowSecretValues bool
}

// Redacted replaces a hidden value.
const Redacted = "<redacted>"

// LastAppliedAnnotation is the annotation client-side apply keeps.
const LastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"

// CorruptError reports managedFields that can't be decoded.
type CorruptError struct {
	Object string
	Entry  int
	Err    error
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("%s: managedFields[%d] is corrupt (%v): the apiserver resets such managedFields on the next write; inspect it with kubectl get -o yaml --show-managed-fields", e.Object, e.Entry, e.Err)
}

func (e *CorruptError) Unwrap() error { return e.Err }

// RefOf returns the reference of an object.
func RefOf(obj *unstructured.Unstructured) ObjectRef {
	return ObjectRef{
		APIVersion:      obj.GetAPIVersion(),
		Kind:            obj.GetKind(),
		Namespace:       obj.GetNamespace(),
		Name:            obj.GetName(),
		UID:             string(obj.GetUID()),
		ResourceVersion: obj.GetResourceVersion(),
	}
}

// ObjectName formats an object as Kind/namespace/name (Kind/name when it is
// cluster-scoped), the form every error message uses.
func ObjectName(kind, namespace, name string) string {
	if namespace == "" {
		return kind + "/" + name
	}
	return kind + "/" + namespace + "/" + name
}

// OwnerOf returns the identity of a managedFields entry.
func OwnerOf(e metav1.ManagedFieldsEntry) Owner {
	return Owner{
		Manager:     e.Manager,
		Operation:   string(e.Operation),
		Subresource: e.Subresource,
		APIVersion:  e.APIVersion,
		Time:        e.Time,
	}
}

// DecodeEntry decodes the FieldsV1 of one managedFields entry. An entry
// without fields decodes to an empty set.
func DecodeEntry(e metav1.ManagedFieldsEntry) (*fieldpath.Set, error) {
	set := &fieldpath.Set{}
	if e.FieldsV1 == nil || len(bytes.TrimSpace(e.FieldsV1.Raw)) == 0 {
		return set, nil
	}
	if e.FieldsType != "" && e.FieldsType != "FieldsV1" {
		return nil, fmt.Errorf("unknown fieldsType %q", e.FieldsType)
	}
	if err := set.FromJSON(bytes.NewReader(e.FieldsV1.Raw)); err != nil {
		return nil, err
	}
	return set, nil
}

// Analyze builds the ownership report of obj.
func Analyze(obj *unstructured.Unstructured, opts Options) (*Report, error) {
	ref := RefOf(obj)
	name := ObjectName(ref.Kind, ref.Namespace, ref.Name)
	entries, err := managedFields(obj)
	if err != nil {
		return nil, fmt.Errorf("%s: metadata.managedFields is malformed (%v): fix the file or re-read the object from the cluster", name, err)
	}

	r := &Report{Kind: ReportKind, Object: ref, Managers: []Manager{}, Fields: []Field{}, Unowned: []string{}}
	r.Tree = &Node{}
	for i, e := range entries {
		set, err := DecodeEntry(e)
		if err != nil {
			return nil, &CorruptError{Object: name, Entry: i, Err: err}
		}
		r.Managers = append(r.Managers, Manager{Owner: OwnerOf(e), FieldCount: set.Size(), Set: set})
		set.Iterate(func(p fieldpath.Path) { r.Tree.insert(p, i) })
	}
	r.Tree.sortAll()

	content := obj.DeepCopy().Object
	unstructured.RemoveNestedField(content, "metadata", "managedFields")
	if !opts.ShowSecretValues && IsSecret(ref.APIVersion, ref.Kind) {
		redactSecret(content)
	}
	r.Content = content

	r.Tree.walk(func(n *Node) {
		if len(n.Owners) == 0 {
			return
		}
		f := Field{Path: n.Path.String(), PathElements: n.Path}
		for _, i := range n.Owners {
			f.Owners = append(f.Owners, r.Managers[i].Owner)
		}
		if v, ok := Lookup(content, n.Path); ok && (len(n.Children) == 0 || isScalar(v)) && n.PE.Key == nil {
			f.Value, f.HasValue = v, true
			if s, ok := v.(string); ok && s == Redacted {
				f.Redacted = true
			}
		}
		r.Fields = append(r.Fields, f)
	})
	r.UnownedPaths = unowned(content, r.Tree)
	for _, p := range r.UnownedPaths {
		r.Unowned = append(r.Unowned, p.String())
	}
	return r, nil
}

func managedFields(obj *unstructured.Unstructured) ([]metav1.ManagedFieldsEntry, error) {
	raw, found, err := unstructured.NestedFieldNoCopy(obj.Object, "metadata", "managedFields")
	if err != nil || !found || raw == nil {
		return nil, err
	}
	list, ok := raw.([]interface{})
	if !ok {
		return nil, fmt.Errorf("expected a list, got %T", raw)
	}
	out := make([]metav1.ManagedFieldsEntry, 0, len(list))
	for i, item := range list {
		m, ok := item.(map[string]interface{})
		if !ok {
			return nil, fmt.Errorf("entry %d: expected an object, got %T", i, item)
		}
		var e metav1.ManagedFieldsEntry
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, &e); err != nil {
			return nil, fmt.Errorf("entry %d: %v", i, err)
		}
		out = append(out, e)
	}
	return out, nil
}

// IsSecret tells whether values of this kind are secret.
func IsSecret(apiVersion, kind string) bool {
	return apiVersion == "v1" && kind == "Secret"
}

func redactSecret(content map[string]interface{}) {
	for _, key := range []string{"data", "stringData"} {
		if m, ok := content[key].(map[string]interface{}); ok {
			for k := range m {
				m[k] = Redacted
			}
		}
	}
	// client-side apply copies the whole Secret, values included, into
	// this annotation.
	if ann, ok, _ := unstructured.NestedStringMap(content, "metadata", "annotations"); ok {
		if _, has := ann[LastAppliedAnnotation]; has {
			_ = unstructured.SetNestedField(content, Redacted, "metadata", "annotations", LastAppliedAnnotation)
		}
	}
}

func isScalar(v interface{}) bool {
	switch v.(type) {
	case map[string]interface{}, []interface{}:
		return false
	}
	return true
}

func (n *Node) insert(p fieldpath.Path, owner int) {
	cur := n
	for i, pe := range p {
		key := peKey(pe)
		child := cur.index[key]
		if child == nil {
			child = &Node{PE: pe, Path: p[:i+1].Copy()}
			if cur.index == nil {
				cur.index = map[string]*Node{}
			}
			cur.index[key] = child
			cur.Children = append(cur.Children, child)
		}
		cur = child
	}
	cur.Owners = append(cur.Owners, owner)
}

func peKey(pe fieldpath.PathElement) string {
	s, err := fieldpath.SerializePathElement(pe)
	if err != nil {
		return pe.String()
	}
	return s
}

func (n *Node) sortAll() {
	sort.Slice(n.Children, func(i, j int) bool { return n.Children[i].PE.Less(n.Children[j].PE) })
	sort.Ints(n.Owners)
	for _, c := range n.Children {
		c.sortAll()
	}
}

func (n *Node) walk(f func(*Node)) {
	for _, c := range n.Children {
		f(c)
		c.walk(f)
	}
}

// Walk calls f for every node below n, depth first, in path order.
func (n *Node) Walk(f func(*Node)) { n.walk(f) }

// Child returns the child for pe, or nil.
func (n *Node) Child(pe fieldpath.PathElement) *Node {
	if n == nil {
		return nil
	}
	return n.index[peKey(pe)]
}

// Atomic tells whether the node is owned as a whole: it is a member of some
// manager's set with nothing owned below it, and it is not a list item
// (whose "." member marks only the item's existence).
func (n *Node) Atomic() bool {
	return n != nil && len(n.Owners) > 0 && len(n.Children) == 0 && n.PE.Key == nil
}

// ItemElement chooses the path element of a list item: by key or by value
// when the owned paths under the list say the list is associative or a set,
// and by index otherwise. It returns the trie child when one exists.
func (n *Node) ItemElement(item interface{}, index int) (fieldpath.PathElement, *Node) {
	if n != nil && len(n.Children) > 0 {
		first := n.Children[0].PE
		switch {
		case first.Key != nil:
			names := make([]string, 0, len(*first.Key))
			for _, f := range *first.Key {
				names = append(names, f.Name)
			}
			if m, ok := item.(map[string]interface{}); ok {
				if pe, ok := keyElement(m, names); ok {
					return pe, n.Child(pe)
				}
			}
		case first.Value != nil:
			pe := fieldpath.ValueElement(interfaceValue(item))
			return pe, n.Child(pe)
		}
	}
	pe := fieldpath.IndexElement(index)
	return pe, n.Child(pe)
}
