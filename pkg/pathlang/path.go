package pathlang

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/value"
)

// Path is a field path in report data. It marshals (JSON, YAML) to the
// apiserver's path string, the one conflict errors and fieldpath.Path's
// String use, so reports of different commands join on it. String prints
// it for people: the same, except that a field name that is not a plain
// identifier is quoted, .metadata.labels["app.kubernetes.io/name"], so
// that it reads back (ParsePath) as the same path.
type Path fieldpath.Path

// String is the printed form: ParsePath(p.String()) is p.
func (p Path) String() string {
	var b strings.Builder
	for _, pe := range p {
		appendElement(&b, pe)
	}
	return b.String()
}

// APIServerString is the apiserver's form, ambiguous where field names
// hold dots.
func (p Path) APIServerString() string { return pathString(fieldpath.Path(p)) }

// MarshalText writes the apiserver's form.
func (p Path) MarshalText() ([]byte, error) { return []byte(p.APIServerString()), nil }

// UnmarshalText reads the apiserver's form (ParseServerPath). Without the
// object a dot always starts a field, so a dotted label key comes back as
// several fields: keep the object and use ParseServerPath.
func (p *Path) UnmarshalText(b []byte) error {
	*p = ParseServerPath(string(b))
	return nil
}

// Elements is the structured-merge-diff path.
func (p Path) Elements() fieldpath.Path { return fieldpath.Path(p) }

// ElementString prints one element as Path's String does.
func ElementString(pe fieldpath.PathElement) string {
	var b strings.Builder
	appendElement(&b, pe)
	return b.String()
}

func appendElement(b *strings.Builder, pe fieldpath.PathElement) {
	switch {
	case pe.FieldName != nil:
		if simpleName(*pe.FieldName) {
			b.WriteByte('.')
			b.WriteString(*pe.FieldName)
			return
		}
		b.WriteByte('[')
		b.WriteString(strconv.Quote(*pe.FieldName))
		b.WriteByte(']')
	case pe.Index != nil:
		b.WriteByte('[')
		b.WriteString(strconv.Itoa(*pe.Index))
		b.WriteByte(']')
	case pe.Value != nil:
		b.WriteString("[=")
		b.WriteString(valueText(*pe.Value))
		b.WriteByte(']')
	case pe.Key != nil:
		b.WriteByte('[')
		for i, f := range *pe.Key {
			if i > 0 {
				b.WriteByte(',')
			}
			if simpleName(f.Name) {
				b.WriteString(f.Name)
			} else {
				b.WriteString(strconv.Quote(f.Name))
			}
			b.WriteByte('=')
			b.WriteString(valueText(f.Value))
		}
		b.WriteByte(']')
	}
}

// valueText writes a key or set value as the apiserver does (value.ToString)
// for scalars, and as JSON for maps and lists, which ToString writes in a
// form nothing reads back.
func valueText(v value.Value) string {
	if v.IsList() || v.IsMap() {
		b, err := json.Marshal(v.Unstructured())
		if err == nil {
			return string(b)
		}
	}
	return value.ToString(v)
}

// simpleName tells whether a field name can be written after a dot:
// ^[A-Za-z_$][A-Za-z0-9_$-]*$.
func simpleName(s string) bool { return identifier(s, true) }

// identifier tells whether s is ^[A-Za-z_][A-Za-z0-9_]*$, or with ours,
// ^[A-Za-z_$][A-Za-z0-9_$-]*$.
func identifier(s string, ours bool) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c == '_', ours && c == '$':
		case i > 0 && (c >= '0' && c <= '9' || ours && c == '-'):
		default:
			return false
		}
	}
	return true
}

// Paths converts structured-merge-diff paths.
func Paths(ps []fieldpath.Path) []Path {
	out := make([]Path, len(ps))
	for i, p := range ps {
		out[i] = Path(p)
	}
	return out
}

// ParsePath reads a path in any form the path language allows (see
// syntax.go): the printed form, the apiserver's, kubectl's JSONPath, list
// items by position or key, managedFields elements. Wildcards are an
// error: a path names one field.
//
// The objects given, if any, resolve what the text leaves open, against
// the first object that has the field: a dotted name of the apiserver's
// form is the longest key that exists; a bare word in a key or set value
// takes the type the item has ([name=80] is the item named "80"); and a
// list item written by position or by part of its key is written the way
// the object's metadata.managedFields name the items of that list, so
// .spec.containers[0].image becomes .spec.containers[name="app"].image,
// the path managedFields hold.
func ParsePath(s string, objects ...any) (fieldpath.Path, error) {
	return parsePath(s, syntaxPath, objects)
}

// ParseServerPath reads a path the apiserver wrote (a conflict's field,
// a report's path): as ParsePath, but "*" and "?" are characters of
// names. A path it can't read (a field name with a "[") comes back as one
// field that marshals to the same text.
func ParseServerPath(s string, objects ...any) Path {
	p, err := parsePath(s, syntaxServer, objects)
	if err != nil {
		name := strings.TrimPrefix(s, ".")
		return Path{{FieldName: &name}}
	}
	return Path(p)
}

func parsePath(s string, kind syntax, objects []any) (fieldpath.Path, error) {
	// Every name and value the API holds is UTF-8; bytes that are not
	// could not print back as they were read (JSON writes them U+FFFD).
	if !utf8.ValidString(s) {
		return nil, fmt.Errorf("the path %q is not UTF-8 text", s)
	}
	r := &resolver{objects: objects}
	var longest func([]segment, string) string
	if len(objects) > 0 {
		longest = r.longest
	}
	segs, err := parseSegments(s, kind, longest)
	if err != nil {
		return nil, err
	}
	out := make(fieldpath.Path, 0, len(segs))
	for _, seg := range segs {
		pe := r.element(out, seg)
		out = append(out, pe)
	}
	return out, nil
}

// resolver turns segments into path elements against objects.
type resolver struct {
	objects []any
	// read and cur: the segments longest has descended through, and the
	// values they lead to in each object.
	read int
	cur  []any
	// managed is the managedFields (FieldsV1 trees) of the objects, read
	// on first use.
	managed     []map[string]any
	managedRead bool
}

// longest returns the longest key of the values below read that rest
// starts with, followed by the end, "." or "[".
func (r *resolver) longest(read []segment, rest string) string {
	if r.cur == nil && r.read == 0 {
		r.cur = r.objects
	}
	for ; r.read < len(read); r.read++ {
		r.cur = descendSegment(r.cur, read[r.read])
	}
	best := ""
	for _, o := range r.cur {
		m, ok := o.(map[string]any)
		if !ok {
			continue
		}
		for k := range m {
			if len(k) > len(best) && strings.HasPrefix(rest, k) && (len(rest) == len(k) || rest[len(k)] == '.' || rest[len(k)] == '[') {
				best = k
			}
		}
	}
	return best
}

// descendSegment returns the values seg selects below each of objs.
func descendSegment(objs []any, seg segment) []any {
	var out []any
	for _, o := range objs {
		switch seg.kind {
		case segField:
			if m, ok := o.(map[string]any); ok {
				if v, ok := m[seg.name.lit]; ok {
					out = append(out, v)
				}
			}
		default:
			if l, ok := o.([]any); ok {
				if i := findItem(l, seg); i >= 0 {
					out = append(out, l[i])
				}
			}
		}
	}
	return out
}

// findItem returns the position of the first item of l that seg (an
// index, key or value segment) selects, or -1.
func findItem(l []any, seg segment) int {
	switch seg.kind {
	case segIndex:
		if seg.index < len(l) {
			return seg.index
		}
	case segKey:
		for i, item := range l {
			if m, ok := item.(map[string]any); ok && keysMatch(m, seg.keys) {
				return i
			}
		}
	case segValue:
		for i, item := range l {
			if seg.val.matches(interfaceValue(item)) {
				return i
			}
		}
	}
	return -1
}

func keysMatch(item map[string]any, keys []keyPart) bool {
	for _, k := range keys {
		v, ok := item[k.name]
		if !ok || !k.val.matches(interfaceValue(v)) {
			return false
		}
	}
	return true
}

// element returns the path element of seg below prefix.
func (r *resolver) element(prefix fieldpath.Path, seg segment) fieldpath.PathElement {
	if seg.kind == segField {
		name := seg.name.lit
		return fieldpath.PathElement{FieldName: &name}
	}
	// A list item: find it in the objects.
	var item any
	found := false
	for _, o := range r.objects {
		v, ok := Lookup(o, prefix)
		if !ok {
			continue
		}
		if l, ok := v.([]any); ok {
			if i := findItem(l, seg); i >= 0 {
				item, found = l[i], true
				break
			}
		}
	}
	if found {
		if pe, ok := r.managedElement(prefix, item); ok {
			return pe
		}
	}
	switch seg.kind {
	case segIndex:
		return fieldpath.IndexElement(seg.index)
	case segValue:
		if found {
			return fieldpath.ValueElement(interfaceValue(item))
		}
		return fieldpath.ValueElement(interfaceValue(seg.val.value()))
	}
	fields := make(value.FieldList, 0, len(seg.keys))
	m, _ := item.(map[string]any)
	for _, k := range seg.keys {
		v := k.val.value()
		if iv, ok := m[k.name]; ok && found {
			v = iv
		}
		fields = append(fields, value.Field{Name: k.name, Value: interfaceValue(v)})
	}
	fields.Sort()
	return fieldpath.PathElement{Key: &fields}
}

// managedElement names item, in the list at prefix, the way the
// managedFields of the objects name that list's items: by key (with the
// key fields they use) or by value. It says false when no entry has items
// of that list, or names them by position.
func (r *resolver) managedElement(prefix fieldpath.Path, item any) (fieldpath.PathElement, bool) {
	if !r.managedRead {
		r.managedRead = true
		for _, o := range r.objects {
			r.managed = append(r.managed, fieldsTrees(o)...)
		}
	}
	for _, tree := range r.managed {
		level, ok := fieldsLevel(tree, prefix)
		if !ok {
			continue
		}
		for k := range level {
			switch {
			case strings.HasPrefix(k, "k:"):
				pe, err := fieldpath.DeserializePathElement(k)
				if err != nil || pe.Key == nil {
					continue
				}
				names := make([]string, 0, len(*pe.Key))
				for _, f := range *pe.Key {
					names = append(names, f.Name)
				}
				if m, ok := item.(map[string]any); ok {
					if kpe, ok := KeyElement(m, names); ok {
						return kpe, true
					}
				}
			case strings.HasPrefix(k, "v:"):
				return fieldpath.ValueElement(interfaceValue(item)), true
			}
		}
	}
	return fieldpath.PathElement{}, false
}

// fieldsTrees returns the fieldsV1 trees of an object's managedFields.
func fieldsTrees(obj any) []map[string]any {
	m, _ := obj.(map[string]any)
	meta, _ := m["metadata"].(map[string]any)
	entries, _ := meta["managedFields"].([]any)
	var out []map[string]any
	for _, e := range entries {
		em, _ := e.(map[string]any)
		if t, ok := em["fieldsV1"].(map[string]any); ok {
			out = append(out, t)
		}
	}
	return out
}

// fieldsLevel descends a fieldsV1 tree along p.
func fieldsLevel(tree map[string]any, p fieldpath.Path) (map[string]any, bool) {
	cur := tree
	for _, pe := range p {
		k, err := fieldpath.SerializePathElement(pe)
		if err != nil {
			return nil, false
		}
		next, ok := cur[k].(map[string]any)
		if !ok {
			return nil, false
		}
		cur = next
	}
	return cur, true
}

// Strings prints paths, for messages.
func Strings(ps []Path) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.String()
	}
	return out
}
