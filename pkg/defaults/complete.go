package defaults

import (
	"sort"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// Completer fills in the defaults an object lacks, as the apiserver's
// defaulting does on every write.
type Completer interface {
	// Complete sets, in obj, every absent field that has a default, and
	// returns the absent fields whose default depends on other fields in
	// a way not known here (the apiserver may set them).
	Complete(obj map[string]any) []fieldpath.Path
}

var (
	_ Completer = (*Table)(nil)
	_ Completer = Structural{}
)

// Complete implements Completer: the kind's generated defaults, for each
// map of the object the table has fields for, parents before children,
// so that a default value is completed in turn.
func (t *Table) Complete(obj map[string]any) []fieldpath.Path {
	var unknown []fieldpath.Path
	var walk func(n *node, v any, p fieldpath.Path, anc []any)
	walk = func(n *node, v any, p fieldpath.Path, anc []any) {
		if n == nil || n.children == nil {
			return
		}
		anc = append(anc[:len(anc):len(anc)], v)
		switch val := v.(type) {
		case map[string]any:
			for _, name := range sortedNames(n.children) {
				c := n.children[name]
				if c.field == nil {
					continue
				}
				if present, ok := val[name]; ok && present != nil && (!c.field.Empty || !isEmpty(present)) {
					// Set; or empty, where the defaulting tests nil.
					// (null is absent: it decodes to nil.)
					continue
				}
				switch a := c.field.Answer(name, anc); a.Outcome {
				case Reset:
					val[name] = a.Value
				case Depends:
					unknown = append(unknown, append(p.Copy(), fieldpath.PathElement{FieldName: &name}))
				}
			}
			for _, k := range sortedKeys(val) {
				c := n.children[k]
				if c == nil {
					c = n.children[segKey]
				}
				name := k
				walk(c, val[k], append(p.Copy(), fieldpath.PathElement{FieldName: &name}), anc)
			}
		case []any:
			c := n.children[segItem]
			for i, e := range val {
				idx := i
				walk(c, e, append(p.Copy(), fieldpath.PathElement{Index: &idx}), anc)
			}
		}
	}
	walk(t.root, obj, fieldpath.Path{}, nil)
	return unknown
}

// Complete implements Completer: structural defaults are constants.
func (s Structural) Complete(obj map[string]any) []fieldpath.Path {
	s.complete(obj, s.Type, 0)
	return nil
}

// sortedNames are a node's field-name children (not the wildcards), in
// order, so that defaults that read their siblings see the same ones on
// every run.
func sortedNames(children map[string]*node) []string {
	out := make([]string, 0, len(children))
	for k := range children {
		if k != segItem && k != segKey {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

func sortedKeys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// isEmpty tells whether v is an empty list or map.
func isEmpty(v any) bool {
	switch t := v.(type) {
	case []any:
		return len(t) == 0
	case map[string]any:
		return len(t) == 0
	}
	return false
}
