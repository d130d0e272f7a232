// Package yamlpos finds where a field is written in a manifest file: the
// line of a path (.spec.template.spec.containers[name="app"].image) in
// the document of one object, read with yaml.v3's nodes, which keep
// their lines. The -o formats that point at the input (SARIF) use it, so
// code scanning annotates the line a reviewer changes.
package yamlpos

import (
	"bytes"
	"errors"
	"io"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/value"
)

// Index is the objects of one manifest file, each with its node.
type Index struct {
	docs []doc
}

type doc struct {
	kind, namespace, name string
	root                  *yaml.Node
}

// Parse reads every document of data (a file of several objects, a v1
// List's items).
func Parse(data []byte) (*Index, error) {
	ix := &Index{}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var n yaml.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			return ix, nil
		}
		if err != nil {
			return nil, err
		}
		ix.add(resolve(&n))
	}
}

// add indexes one object, or a List's items.
func (ix *Index) add(root *yaml.Node) {
	if root == nil || root.Kind != yaml.MappingNode {
		return
	}
	kind := scalar(field(root, "kind"))
	if items := field(root, "items"); items != nil && items.Kind == yaml.SequenceNode && strings.HasSuffix(kind, "List") {
		for _, it := range items.Content {
			ix.add(resolve(it))
		}
		return
	}
	meta := field(root, "metadata")
	ix.docs = append(ix.docs, doc{kind: kind, namespace: scalar(field(meta, "namespace")), name: scalar(field(meta, "name")), root: root})
}

// Object is the line where the object of kind, namespace and name
// starts (0: not in the file). A document without a namespace matches
// any: the namespace comes from the context or -n.
func (ix *Index) Object(kind, namespace, name string) int {
	if d := ix.find(kind, namespace, name); d != nil {
		return d.root.Line
	}
	return 0
}

// Line is the line of p in the object's document: of the field's key, or
// of the list item. When the file does not hold all of p (a field the
// manifest does not set, a default), it is the line of the deepest part
// it holds, and exact is false. 0 when the object is not in the file.
func (ix *Index) Line(kind, namespace, name string, p fieldpath.Path) (line int, exact bool) {
	d := ix.find(kind, namespace, name)
	if d == nil {
		return 0, false
	}
	n, line := d.root, d.root.Line
	for _, pe := range p {
		next, at := step(n, pe)
		if next == nil {
			return line, false
		}
		n, line = next, at
	}
	return line, true
}

func (ix *Index) find(kind, namespace, name string) *doc {
	for i := range ix.docs {
		d := &ix.docs[i]
		if d.kind == kind && d.name == name && (d.namespace == "" || d.namespace == namespace) {
			return d
		}
	}
	return nil
}

// step goes down one element of a path: the node it names and the line
// that names it (nil when n does not hold it).
func step(n *yaml.Node, pe fieldpath.PathElement) (*yaml.Node, int) {
	switch {
	case pe.FieldName != nil:
		if n.Kind != yaml.MappingNode {
			return nil, 0
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == *pe.FieldName {
				return resolve(n.Content[i+1]), n.Content[i].Line
			}
		}
	case n.Kind != yaml.SequenceNode:
	case pe.Index != nil:
		if *pe.Index >= 0 && *pe.Index < len(n.Content) {
			return item(n.Content[*pe.Index])
		}
	case pe.Value != nil:
		for _, it := range n.Content {
			if it = resolve(it); it.Kind == yaml.ScalarNode && it.Value == text(*pe.Value) {
				return it, it.Line
			}
		}
	case pe.Key != nil:
		// Every key field first; then the items that set only some of
		// them (a port without its protocol, which the server defaults).
		for _, all := range []bool{true, false} {
			for _, it := range n.Content {
				if it = resolve(it); keyed(it, *pe.Key, all) {
					return item(it)
				}
			}
		}
	}
	return nil, 0
}

func item(n *yaml.Node) (*yaml.Node, int) {
	n = resolve(n)
	return n, n.Line
}

// keyed tells whether item has the key's values: all of them, or (not
// all) at least one, with none different.
func keyed(item *yaml.Node, key value.FieldList, all bool) bool {
	if item.Kind != yaml.MappingNode {
		return false
	}
	found := 0
	for _, f := range key {
		v := field(item, f.Name)
		switch {
		case v == nil:
			if all {
				return false
			}
		case v.Kind != yaml.ScalarNode || v.Value != text(f.Value):
			return false
		default:
			found++
		}
	}
	return found > 0
}

// text is a key's value as YAML writes a plain scalar.
func text(v value.Value) string {
	switch {
	case v.IsString():
		return v.AsString()
	case v.IsInt():
		return strconv.FormatInt(v.AsInt(), 10)
	case v.IsBool():
		return strconv.FormatBool(v.AsBool())
	case v.IsFloat():
		return strconv.FormatFloat(v.AsFloat(), 'g', -1, 64)
	}
	return ""
}

func field(n *yaml.Node, name string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == name {
			return resolve(n.Content[i+1])
		}
	}
	return nil
}

func scalar(n *yaml.Node) string {
	if n == nil || n.Kind != yaml.ScalarNode {
		return ""
	}
	return n.Value
}

// resolve is the node a document or an alias stands for.
func resolve(n *yaml.Node) *yaml.Node {
	for n != nil {
		switch {
		case n.Kind == yaml.DocumentNode && len(n.Content) > 0:
			n = n.Content[0]
		case n.Kind == yaml.AliasNode:
			n = n.Alias
		default:
			return n
		}
	}
	return nil
}
