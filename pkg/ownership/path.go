package ownership

import (
	"regexp"
	"sort"
	"strconv"
	"strings"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/value"
)

var simpleName = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$-]*$`)

// DisplayPath formats a path for people: like the apiserver's path string,
// but a field name that is not a plain identifier (label keys with dots or
// slashes) is written as ["app.kubernetes.io/name"], so no two paths read
// the same.
func DisplayPath(p fieldpath.Path) string {
	var b strings.Builder
	for _, pe := range p {
		b.WriteString(DisplayElement(pe))
	}
	return b.String()
}

// DisplayElement formats one path element as DisplayPath does.
func DisplayElement(pe fieldpath.PathElement) string {
	if pe.FieldName != nil {
		if simpleName.MatchString(*pe.FieldName) {
			return "." + *pe.FieldName
		}
		return "[" + strconv.Quote(*pe.FieldName) + "]"
	}
	return pe.String()
}

// Lookup returns the value at path p in an unstructured object.
func Lookup(obj interface{}, p fieldpath.Path) (interface{}, bool) {
	cur := obj
	for _, pe := range p {
		switch {
		case pe.FieldName != nil:
			m, ok := cur.(map[string]interface{})
			if !ok {
				return nil, false
			}
			if cur, ok = m[*pe.FieldName]; !ok {
				return nil, false
			}
		case pe.Index != nil:
			l, ok := cur.([]interface{})
			if !ok || *pe.Index < 0 || *pe.Index >= len(l) {
				return nil, false
			}
			cur = l[*pe.Index]
		case pe.Key != nil:
			l, ok := cur.([]interface{})
			if !ok {
				return nil, false
			}
			found := false
			for _, item := range l {
				if m, ok := item.(map[string]interface{}); ok && matchKey(m, *pe.Key) {
					cur, found = item, true
					break
				}
			}
			if !found {
				return nil, false
			}
		case pe.Value != nil:
			l, ok := cur.([]interface{})
			if !ok {
				return nil, false
			}
			found := false
			for _, item := range l {
				if value.Equals(interfaceValue(item), *pe.Value) {
					cur, found = item, true
					break
				}
			}
			if !found {
				return nil, false
			}
		default:
			return nil, false
		}
	}
	return cur, true
}

func interfaceValue(v interface{}) value.Value { return value.NewValueInterface(v) }

func matchKey(item map[string]interface{}, key value.FieldList) bool {
	for _, f := range key {
		v, ok := item[f.Name]
		if !ok || !value.Equals(interfaceValue(v), f.Value) {
			return false
		}
	}
	return true
}

func keyElement(item map[string]interface{}, names []string) (fieldpath.PathElement, bool) {
	fields := make(value.FieldList, 0, len(names))
	for _, n := range names {
		v, ok := item[n]
		if !ok {
			return fieldpath.PathElement{}, false
		}
		fields = append(fields, value.Field{Name: n, Value: interfaceValue(v)})
	}
	fields.Sort()
	return fieldpath.PathElement{Key: &fields}, true
}

// neverOwned are the paths the apiserver strips before tracking ownership.
var neverOwned = map[string]bool{
	".apiVersion":                          true,
	".kind":                                true,
	".metadata.name":                       true,
	".metadata.namespace":                  true,
	".metadata.uid":                        true,
	".metadata.resourceVersion":            true,
	".metadata.generation":                 true,
	".metadata.creationTimestamp":          true,
	".metadata.managedFields":              true,
	".metadata.selfLink":                   true,
	".metadata.deletionTimestamp":          true,
	".metadata.deletionGracePeriodSeconds": true,
}

// NeverOwned tells whether the apiserver never tracks ownership of path.
func NeverOwned(p string) bool { return neverOwned[p] }

func unowned(content map[string]interface{}, tree *Node) []fieldpath.Path {
	var out []fieldpath.Path
	var visit func(v interface{}, n *Node, p fieldpath.Path, root bool)
	visit = func(v interface{}, n *Node, p fieldpath.Path, root bool) {
		ps := p.String()
		if !root && neverOwned[ps] {
			return
		}
		if n != nil && (n.Atomic() || (len(n.Owners) > 0 && isScalar(v))) {
			return
		}
		m, isMap := v.(map[string]interface{})
		if n == nil && !(isMap && (root || ps == ".metadata")) {
			out = append(out, p)
			return
		}
		switch t := v.(type) {
		case map[string]interface{}:
			keys := make([]string, 0, len(m))
			for k := range m {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				pe := fieldpath.PathElement{FieldName: &k}
				visit(m[k], n.Child(pe), append(p.Copy(), pe), false)
			}
		case []interface{}:
			for i, item := range t {
				pe, child := n.ItemElement(item, i)
				visit(item, child, append(p.Copy(), pe), false)
			}
		}
	}
	visit(content, tree, fieldpath.Path{}, true)
	return out
}

// PathMatcher matches paths against a glob such as .spec.template.** or
// .metadata.labels.*: "*" is one path element, "**" any number of them
// (none included), and inside an element "*" and "?" are wildcards.
// Elements are written as in DisplayPath or as the apiserver writes them.
type PathMatcher struct {
	raw    string
	tokens []string
}

// NewPathMatcher compiles a glob.
func NewPathMatcher(pattern string) *PathMatcher {
	return &PathMatcher{raw: pattern, tokens: tokenize(pattern)}
}

// Match tells whether p matches.
func (m *PathMatcher) Match(p fieldpath.Path) bool {
	if m.raw == p.String() || m.raw == DisplayPath(p) {
		return true
	}
	parts := make([]string, len(p))
	for i, pe := range p {
		parts[i] = elementText(pe)
	}
	return matchTokens(m.tokens, parts)
}

func elementText(pe fieldpath.PathElement) string {
	if pe.FieldName != nil {
		return *pe.FieldName
	}
	s := pe.String()
	return s[1 : len(s)-1]
}

func tokenize(pattern string) []string {
	var out []string
	for i := 0; i < len(pattern); {
		switch pattern[i] {
		case '.':
			j := i + 1
			for j < len(pattern) && pattern[j] != '.' && pattern[j] != '[' {
				j++
			}
			out = append(out, pattern[i+1:j])
			i = j
		case '[':
			j, inQuote := i+1, false
			for j < len(pattern) && (inQuote || pattern[j] != ']') {
				if pattern[j] == '\\' && inQuote {
					j++
				} else if pattern[j] == '"' {
					inQuote = !inQuote
				}
				j++
			}
			inner := pattern[i+1 : min(j, len(pattern))]
			if s, err := strconv.Unquote(inner); err == nil {
				inner = s // ["app.kubernetes.io/name"] is a field name
			}
			out = append(out, inner)
			i = j + 1
		default:
			j := i
			for j < len(pattern) && pattern[j] != '.' && pattern[j] != '[' {
				j++
			}
			out = append(out, pattern[i:j])
			i = j
		}
	}
	return out
}

func matchTokens(tokens, parts []string) bool {
	if len(tokens) == 0 {
		return len(parts) == 0
	}
	if tokens[0] == "**" {
		for i := 0; i <= len(parts); i++ {
			if matchTokens(tokens[1:], parts[i:]) {
				return true
			}
		}
		return false
	}
	if len(parts) == 0 || !Glob(tokens[0], parts[0]) {
		return false
	}
	return matchTokens(tokens[1:], parts[1:])
}

// Glob matches s against a pattern where "*" is any run of characters and
// "?" any one character; nothing else is special.
func Glob(pattern, s string) bool {
	p, t := []rune(pattern), []rune(s)
	pi, ti, star, mark := 0, 0, -1, 0
	for ti < len(t) {
		switch {
		case pi < len(p) && (p[pi] == '?' || p[pi] == t[ti]):
			pi++
			ti++
		case pi < len(p) && p[pi] == '*':
			star, mark = pi, ti
			pi++
		case star >= 0:
			pi = star + 1
			mark++
			ti = mark
		default:
			return false
		}
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}
