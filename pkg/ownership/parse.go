package ownership

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/value"
)

// ParsePath reads a path in the apiserver's format (fieldpath.Path's
// String form) back into path elements. The format does not escape dots in
// field names (.metadata.labels.app.kubernetes.io/name), so the objects
// given are used to choose the field names that exist; without them a dot
// always starts a new field.
func ParsePath(s string, objects ...interface{}) (fieldpath.Path, error) {
	var out fieldpath.Path
	cur := objects
	for i := 0; i < len(s); {
		switch s[i] {
		case '.':
			rest := s[i+1:]
			name := longestKey(rest, cur)
			if name == "" {
				j := strings.IndexAny(rest, ".[")
				if j < 0 {
					j = len(rest)
				}
				name = rest[:j]
			}
			n := name
			out = append(out, fieldpath.PathElement{FieldName: &n})
			cur = descendField(cur, name)
			i += 1 + len(name)
		case '[':
			j, err := closingBracket(s, i)
			if err != nil {
				return nil, err
			}
			pe, err := parseBracket(s[i+1 : j])
			if err != nil {
				return nil, fmt.Errorf("path %q: %w", s, err)
			}
			out = append(out, pe)
			cur = descendItem(cur, pe)
			i = j + 1
		default:
			return nil, fmt.Errorf("path %q: unexpected %q at %d", s, s[i], i)
		}
	}
	return out, nil
}

func longestKey(rest string, objs []interface{}) string {
	var keys []string
	for _, o := range objs {
		if m, ok := o.(map[string]interface{}); ok {
			for k := range m {
				if strings.HasPrefix(rest, k) && (len(rest) == len(k) || rest[len(k)] == '.' || rest[len(k)] == '[') {
					keys = append(keys, k)
				}
			}
		}
	}
	sort.Slice(keys, func(i, j int) bool { return len(keys[i]) > len(keys[j]) })
	if len(keys) == 0 {
		return ""
	}
	return keys[0]
}

func descendField(objs []interface{}, name string) []interface{} {
	var out []interface{}
	for _, o := range objs {
		if m, ok := o.(map[string]interface{}); ok {
			if v, ok := m[name]; ok {
				out = append(out, v)
			}
		}
	}
	return out
}

func descendItem(objs []interface{}, pe fieldpath.PathElement) []interface{} {
	var out []interface{}
	for _, o := range objs {
		if v, ok := Lookup(o, fieldpath.Path{pe}); ok {
			out = append(out, v)
		}
	}
	return out
}

func closingBracket(s string, open int) (int, error) {
	inQuote := false
	for j := open + 1; j < len(s); j++ {
		switch {
		case inQuote && s[j] == '\\':
			j++
		case s[j] == '"':
			inQuote = !inQuote
		case !inQuote && s[j] == ']':
			return j, nil
		}
	}
	return 0, fmt.Errorf("path %q: unclosed [", s)
}

func parseBracket(in string) (fieldpath.PathElement, error) {
	if name, err := strconv.Unquote(in); err == nil && strings.HasPrefix(in, `"`) {
		// ["app.kubernetes.io/name"]: a field name, as DisplayPath writes it.
		return fieldpath.PathElement{FieldName: &name}, nil
	}
	if strings.HasPrefix(in, "=") {
		v, err := parseScalar(in[1:])
		if err != nil {
			return fieldpath.PathElement{}, err
		}
		val := value.NewValueInterface(v)
		return fieldpath.PathElement{Value: &val}, nil
	}
	if n, err := strconv.Atoi(in); err == nil {
		return fieldpath.PathElement{Index: &n}, nil
	}
	var fields value.FieldList
	for _, part := range splitUnquoted(in, ',') {
		k, v, ok := strings.Cut(part, "=")
		if !ok {
			return fieldpath.PathElement{}, fmt.Errorf("key %q has no value", part)
		}
		sv, err := parseScalar(v)
		if err != nil {
			return fieldpath.PathElement{}, err
		}
		fields = append(fields, value.Field{Name: k, Value: value.NewValueInterface(sv)})
	}
	fields.Sort()
	return fieldpath.PathElement{Key: &fields}, nil
}

func splitUnquoted(s string, sep byte) []string {
	var out []string
	start, inQuote := 0, false
	for i := 0; i < len(s); i++ {
		switch {
		case inQuote && s[i] == '\\':
			i++
		case s[i] == '"':
			inQuote = !inQuote
		case !inQuote && s[i] == sep:
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

// parseScalar reads a value as value.ToString writes it.
func parseScalar(s string) (interface{}, error) {
	switch {
	case strings.HasPrefix(s, `"`):
		return strconv.Unquote(s)
	case s == "true":
		return true, nil
	case s == "false":
		return false, nil
	case s == "null":
		return nil, nil
	}
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return i, nil
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		return f, nil
	}
	return nil, fmt.Errorf("cannot read value %q", s)
}
