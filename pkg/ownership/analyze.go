package ownership

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/value"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/pathlang"
)

// Options tune Analyze.
type Options struct {
	// ShowSecretValues keeps the values of Secret data, stringData and the
	// last-applied annotation of Secrets; by default they are redacted.
	ShowSecretValues bool
}

// RedactedN replaces the n-th distinct hidden value of a field (from 1):
// two values that differ read differently, and neither is shown.
func RedactedN(n int) string { return fmt.Sprintf("%s #%d", v1alpha1.Redacted, n) }

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
func RefOf(obj *unstructured.Unstructured) v1alpha1.ObjectRef {
	return v1alpha1.ObjectRef{
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
	return v1alpha1.ObjectName(kind, namespace, name)
}

// OwnerOf returns the identity of a managedFields entry.
func OwnerOf(e metav1.ManagedFieldsEntry) v1alpha1.Owner {
	return v1alpha1.Owner{
		Manager:     e.Manager,
		Operation:   v1alpha1.Operation(e.Operation),
		Subresource: v1alpha1.Subresource(e.Subresource),
		APIVersion:  e.APIVersion,
		Time:        e.Time,
	}
}

// DecodeEntry decodes the FieldsV1 of one managedFields entry. An entry
// without fields decodes to an empty set.
func DecodeEntry(e metav1.ManagedFieldsEntry) (*fieldpath.Set, error) {
	set := &fieldpath.Set{}
	raw := e.FieldsV1.GetRawBytes()
	if len(bytes.TrimSpace(raw)) == 0 {
		return set, nil
	}
	if e.FieldsType != "" && e.FieldsType != "FieldsV1" {
		return nil, fmt.Errorf("unknown fieldsType %q", e.FieldsType)
	}
	if err := set.FromJSON(bytes.NewReader(raw)); err != nil {
		return nil, err
	}
	return set, nil
}

// Analyze builds the ownership report of obj. It does not change obj;
// the report's Content shares the values Analyze leaves as they are with
// obj, so treat both as read-only.
func Analyze(obj *unstructured.Unstructured, opts Options) (*Report, error) {
	r, err := AnalyzeTree(obj, opts)
	if err != nil {
		return nil, err
	}
	r.fields()
	return r, nil
}

// AnalyzeTree is Analyze less the report's Fields and Unowned, left
// empty: the managers with their sets, Tree and Content, which a view
// that walks the object (a diff's gutter) needs, for less work.
func AnalyzeTree(obj *unstructured.Unstructured, opts Options) (*Report, error) {
	ref := RefOf(obj)
	name := ObjectName(ref.Kind, ref.Namespace, ref.Name)
	entries, err := managedFields(obj)
	if err != nil {
		return nil, fmt.Errorf("%s: metadata.managedFields is malformed (%w): fix the file or re-read the object from the cluster", name, err)
	}

	r := &Report{OwnershipReport: v1alpha1.OwnershipReport{TypeMeta: v1alpha1.NewTypeMeta(v1alpha1.OwnershipReportKind), Object: ref, Managers: []v1alpha1.Manager{}, Fields: []v1alpha1.Field{}, Unowned: []pathlang.Path{}}, Entries: len(entries)}
	r.Tree = &Node{}
	arena := &nodeArena{}
	for i, e := range entries {
		set, err := decodeInto(e, r.Tree, i, arena)
		if err != nil {
			return nil, &CorruptError{Object: name, Entry: i, Err: err}
		}
		r.Managers = append(r.Managers, v1alpha1.Manager{Owner: OwnerOf(e.ManagedFieldsEntry), FieldCount: set.Size(), Set: set})
		r.Owners = append(r.Owners, OwnerOf(e.ManagedFieldsEntry))
	}
	r.Tree.sortAll()

	content := withoutManagedFields(obj.Object)
	if !opts.ShowSecretValues && IsSecret(ref.APIVersion, ref.Kind) {
		redactSecret(content)
	}
	r.Content = content
	return r, nil
}

// fields fills Fields and Unowned from Tree and Content.
func (r *Report) fields() {
	content := r.Content
	// One allocation for all fields and one for all their owners.
	fields, owners := 0, 0
	r.Tree.walk(func(n *Node) {
		if len(n.Owners) > 0 {
			fields++
			owners += len(n.Owners)
		}
	})
	r.Fields = make([]v1alpha1.Field, 0, fields)
	ownerBuf := make([]v1alpha1.Owner, 0, owners)
	// Walk the trie and the object together: each value is found from
	// its parent's, not from the root.
	var collect func(n *Node, v any, found bool)
	collect = func(n *Node, v any, found bool) {
		for _, c := range n.Children {
			cv, ok := any(nil), false
			if found {
				cv, ok = pathlang.LookupElement(v, c.PE)
			}
			if len(c.Owners) > 0 {
				start := len(ownerBuf)
				for _, i := range c.Owners {
					ownerBuf = append(ownerBuf, r.Managers[i].Owner)
				}
				f := v1alpha1.Field{Path: pathlang.Path(c.Path), Owners: ownerBuf[start:len(ownerBuf):len(ownerBuf)], Absent: !ok}
				if ok && (len(c.Children) == 0 || isScalar(cv)) && c.PE.Key == nil {
					f.Value, f.HasValue = cv, true
					if s, ok := cv.(string); ok && s == v1alpha1.Redacted {
						f.Redacted = true
					}
				}
				r.Fields = append(r.Fields, f)
			}
			collect(c, cv, ok)
		}
	}
	collect(r.Tree, content, true)
	for _, p := range unowned(content, r.Tree) {
		r.Unowned = append(r.Unowned, pathlang.Path(p))
	}
}

// withoutManagedFields copies the top level and metadata of an object,
// leaving out managedFields; deeper values are shared.
func withoutManagedFields(obj map[string]any) map[string]any {
	out := make(map[string]any, len(obj))
	for k, v := range obj {
		out[k] = v
	}
	if meta, ok := obj["metadata"].(map[string]any); ok {
		m := make(map[string]any, len(meta))
		for k, v := range meta {
			if k != "managedFields" {
				m[k] = v
			}
		}
		out["metadata"] = m
	}
	return out
}

// rawEntry is a managedFields entry read from an unstructured object, its
// fieldsV1 kept as the decoded JSON it already is.
type rawEntry struct {
	metav1.ManagedFieldsEntry
	fields any
}

func managedFields(obj *unstructured.Unstructured) ([]rawEntry, error) {
	raw, found, err := unstructured.NestedFieldNoCopy(obj.Object, "metadata", "managedFields")
	if err != nil || !found || raw == nil {
		return nil, err
	}
	list, ok := raw.([]any)
	if !ok {
		return nil, fmt.Errorf("expected a list, got %T", raw)
	}
	out := make([]rawEntry, 0, len(list))
	for i, item := range list {
		m, ok := item.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("entry %d: expected an object, got %T", i, item)
		}
		// Converting fieldsV1 would marshal it to JSON to parse it again:
		// convert the rest and walk fieldsV1 as it is.
		rest := make(map[string]any, len(m))
		for k, v := range m {
			if k != "fieldsV1" {
				rest[k] = v
			}
		}
		e := rawEntry{fields: m["fieldsV1"]}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(rest, &e.ManagedFieldsEntry); err != nil {
			return nil, fmt.Errorf("entry %d: %w", i, err)
		}
		out = append(out, e)
	}
	return out, nil
}

// Heads returns obj's managedFields entries without their fieldsV1: what
// GetManagedFields returns, FieldsV1 left nil, at a fraction of its cost
// (GetManagedFields copies the whole list and marshals each fieldsV1 to
// JSON). For callers that read an entry's manager, operation,
// subresource, apiVersion or time only. Like GetManagedFields it returns
// nil when an entry does not decode.
func Heads(obj *unstructured.Unstructured) []metav1.ManagedFieldsEntry {
	raw, err := managedFields(obj)
	if err != nil || raw == nil {
		return nil
	}
	out := make([]metav1.ManagedFieldsEntry, len(raw))
	for i := range raw {
		out[i] = raw[i].ManagedFieldsEntry
	}
	return out
}

// decodeInto decodes an entry's fieldsV1 as fieldpath.Set.FromJSON does
// (DecodeEntry), and marks the paths it owns in the trie as owned by
// owner. It returns the entry's set.
func decodeInto(e rawEntry, tree *Node, owner int, arena *nodeArena) (*fieldpath.Set, error) {
	set := &fieldpath.Set{}
	if e.fields == nil {
		return set, nil
	}
	if e.FieldsType != "" && e.FieldsType != "FieldsV1" {
		return nil, fmt.Errorf("unknown fieldsType %q", e.FieldsType)
	}
	m, ok := e.fields.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("fieldsV1 is %T, not an object", e.fields)
	}
	d := decoder{owner: owner, arena: arena}
	if err := d.level(m, set, tree); err != nil {
		return nil, err
	}
	return set, nil
}

type decoder struct {
	owner int
	arena *nodeArena
}

type fieldsItem struct {
	pe    fieldpath.PathElement
	child map[string]any
}

// level decodes one object of a FieldsV1 tree into the set of that level
// and the trie node. As in structured-merge-diff, a child is a member when
// it holds "." or nothing it knows, and keys of unknown kinds are skipped.
// Children are taken in path order, so the set is built by appending.
func (d decoder) level(m map[string]any, set *fieldpath.Set, n *Node) error {
	// Field names, nearly all keys, sort as strings ("f:" + name sorts as
	// name) and before every other kind of element.
	var fieldKeys []string
	var others []fieldsItem
	for k, v := range m {
		switch {
		case k == ".":
			continue
		case len(k) >= 2 && k[0] == 'f' && k[1] == ':':
			fieldKeys = append(fieldKeys, k)
			continue
		}
		pe, err := fieldpath.DeserializePathElement(k)
		if errors.Is(err, fieldpath.ErrUnknownPathElementType) {
			continue
		}
		if err != nil {
			return fmt.Errorf("parsing key %q as a path element: %w", k, err)
		}
		child, err := childObject(k, v)
		if err != nil {
			return err
		}
		others = append(others, fieldsItem{pe: pe, child: child})
	}
	if !slices.IsSorted(fieldKeys) {
		slices.Sort(fieldKeys)
	}
	// Room for this level's children, most of them new.
	if n.fields == nil && len(fieldKeys) > 0 {
		n.fields = make(map[string]*Node, len(fieldKeys))
	}
	n.Children = slices.Grow(n.Children, len(fieldKeys)+len(others))
	d.arena.reserve(len(fieldKeys)+len(others), len(n.Path)+1)
	if set.Members.Size() == 0 {
		set.Members = fieldpath.MakePathElementSet(len(fieldKeys) + len(others))
	}
	names := make([]string, len(fieldKeys))
	for i, k := range fieldKeys {
		child, err := childObject(k, m[k])
		if err != nil {
			return err
		}
		names[i] = k[2:]
		if err := d.child(fieldsItem{pe: fieldpath.PathElement{FieldName: &names[i]}, child: child}, set, n); err != nil {
			return err
		}
	}
	if !slices.IsSortedFunc(others, compareItems) {
		slices.SortFunc(others, compareItems)
	}
	for _, it := range others {
		if err := d.child(it, set, n); err != nil {
			return err
		}
	}
	return nil
}

func childObject(k string, v any) (map[string]any, error) {
	switch t := v.(type) {
	case nil:
		return nil, nil
	case map[string]any:
		return t, nil
	}
	return nil, fmt.Errorf("%s: expected an object, got %T", k, v)
}

func (d decoder) child(it fieldsItem, set *fieldpath.Set, n *Node) error {
	member, nested := membership(it.child)
	c := n.childFor(it.pe, d.arena)
	if member {
		set.Members.Insert(it.pe)
		if len(c.Owners) == 0 || c.Owners[len(c.Owners)-1] != d.owner {
			c.Owners = append(c.Owners, d.owner)
		}
	}
	if nested {
		return d.level(it.child, set.Children.Descend(it.pe), c)
	}
	return nil
}

func compareItems(a, b fieldsItem) int { return a.pe.Compare(b.pe) }

// membership tells whether a FieldsV1 child marks its path as owned, and
// whether it holds paths below.
func membership(child map[string]any) (member, nested bool) {
	for k := range child {
		switch {
		case k == ".":
			member = true
		case len(k) >= 2 && k[1] == ':' && !strings.ContainsRune("fvki", rune(k[0])):
			// an unknown kind of element, skipped
		default:
			nested = true
		}
	}
	return member || !nested, nested
}

// IsSecret tells whether values of this kind are secret.
func IsSecret(apiVersion, kind string) bool {
	return apiVersion == "v1" && kind == "Secret"
}

// RedactSecret replaces the secret values of a Secret's content (data,
// stringData, the last-applied annotation), copying the top level and
// metadata first: the object it came from is left as it was.
func RedactSecret(content map[string]any) map[string]any {
	c := withoutManagedFields(content)
	if mf, ok := nestedMap(content, "metadata")["managedFields"]; ok {
		nestedMap(c, "metadata")["managedFields"] = mf
	}
	redactSecret(c)
	return c
}

func nestedMap(m map[string]any, key string) map[string]any {
	v, _ := m[key].(map[string]any)
	if v == nil {
		return map[string]any{}
	}
	return v
}

// redactSecret replaces secret values in content, whose top level and
// metadata are copies: the maps it changes below them are copied first.
func redactSecret(content map[string]any) {
	for _, key := range []string{"data", "stringData"} {
		if m, ok := content[key].(map[string]any); ok {
			red := make(map[string]any, len(m))
			for k := range m {
				red[k] = v1alpha1.Redacted
			}
			content[key] = red
		}
	}
	// client-side apply copies the whole Secret, values included, into
	// this annotation (whatever the types of the other annotations).
	if meta, ok := content["metadata"].(map[string]any); ok {
		if ann, ok := meta["annotations"].(map[string]any); ok {
			if _, has := ann[LastAppliedAnnotation]; has {
				c := make(map[string]any, len(ann))
				for k, v := range ann {
					c[k] = v
				}
				c[LastAppliedAnnotation] = v1alpha1.Redacted
				meta["annotations"] = c
			}
		}
	}
}

func isScalar(v any) bool {
	switch v.(type) {
	case map[string]any, []any:
		return false
	}
	return true
}

// childFor returns the child for pe, adding it when there is none.
func (n *Node) childFor(pe fieldpath.PathElement, arena *nodeArena) *Node {
	if c := n.Child(pe); c != nil {
		return c
	}
	c := arena.node(n.Path, pe)
	if pe.FieldName != nil {
		if n.fields == nil {
			n.fields = map[string]*Node{}
		}
		n.fields[*pe.FieldName] = c
	} else {
		if n.others == nil {
			n.others = map[string]*Node{}
		}
		n.others[peKey(pe)] = c
	}
	n.Children = append(n.Children, c)
	return c
}

// nodeArena hands out trie nodes and their paths from blocks: an object
// has a node for every path any manager owns, thousands for large ones,
// and one allocation each would be most of the work.
type nodeArena struct {
	nodes []Node
	pes   []fieldpath.PathElement
}

// reserve makes room for n nodes whose paths have depth elements: the
// children of one level, most of which are new. A lone child's path is
// left to node, which extends its parent's in place when it can.
func (a *nodeArena) reserve(n, depth int) {
	// Old blocks stay alive through the pointers into them.
	if cap(a.nodes)-len(a.nodes) < n {
		a.nodes = make([]Node, 0, max(n, 32))
	}
	if n > 1 && cap(a.pes)-len(a.pes) < n*depth {
		a.pes = make([]fieldpath.PathElement, 0, max(n*depth, 64))
	}
}

// node makes the trie node of pe below parent. When parent's path is the
// last one handed out, the child's path extends it in place: a chain of
// nested fields (a deep fieldsV1) then costs its depth, not its square.
func (a *nodeArena) node(parent fieldpath.Path, pe fieldpath.PathElement) *Node {
	a.reserve(1, len(parent)+1)
	n, start := len(parent), len(a.pes)
	switch {
	case n > 0 && len(a.pes) > 0 && cap(a.pes) > len(a.pes) && &a.pes[len(a.pes)-1] == &parent[n-1]:
		start -= n
		a.pes = append(a.pes, pe)
	default:
		if cap(a.pes)-len(a.pes) < n+1 {
			a.pes = make([]fieldpath.PathElement, 0, max(2*(n+1), 64))
			start = 0
		}
		a.pes = append(append(a.pes, parent...), pe)
	}
	// The path's capacity ends at its length: appending to it copies.
	a.nodes = append(a.nodes, Node{PE: pe, Path: a.pes[start:len(a.pes):len(a.pes)]})
	return &a.nodes[len(a.nodes)-1]
}

func peKey(pe fieldpath.PathElement) string {
	s, err := fieldpath.SerializePathElement(pe)
	if err != nil {
		return pe.String()
	}
	return s
}

func compareNodes(a, b *Node) int { return a.PE.Compare(b.PE) }

// sortAll puts children in path order. Owners are in order already: each
// entry marks a node once, and entries are decoded in order.
func (n *Node) sortAll() {
	if !slices.IsSortedFunc(n.Children, compareNodes) {
		slices.SortFunc(n.Children, compareNodes)
	}
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
	if pe.FieldName != nil {
		return n.fields[*pe.FieldName]
	}
	if n.others == nil {
		return nil
	}
	return n.others[peKey(pe)]
}

// Find returns the node of p below n, or nil: the indices of p's owners
// are its Owners, as a walk of each manager's set finds them.
func (n *Node) Find(p fieldpath.Path) *Node {
	for _, pe := range p {
		if n = n.Child(pe); n == nil {
			return nil
		}
	}
	return n
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
func (n *Node) ItemElement(item any, index int) (fieldpath.PathElement, *Node) {
	if n != nil && len(n.Children) > 0 {
		first := n.Children[0].PE
		switch {
		case first.Key != nil:
			names := make([]string, 0, len(*first.Key))
			for _, f := range *first.Key {
				names = append(names, f.Name)
			}
			if m, ok := item.(map[string]any); ok {
				if pe, ok := pathlang.KeyElement(m, names); ok {
					return pe, n.Child(pe)
				}
			}
		case first.Value != nil:
			pe := fieldpath.ValueElement(value.NewValueInterface(item))
			return pe, n.Child(pe)
		}
	}
	pe := fieldpath.IndexElement(index)
	return pe, n.Child(pe)
}
