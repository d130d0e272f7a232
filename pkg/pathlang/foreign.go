package pathlang

import (
	"encoding/json"
	"strconv"
	"strings"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/value"
)

// The path languages of other tools: jq path expressions (Argo CD's
// ignoreDifferences jqPathExpressions, evaluated inside del(...) by gojq)
// and JSON Pointers (RFC 6901: Argo CD's jsonPointers, Flux's ignore
// rules, JSON patches).

// JQ writes p as a jq path expression. A keyed or set list item becomes
// a select over the list's items, so the expression names the same item
// wherever it sits in the list:
// .spec.template.spec.containers[] | select(.name == "web") | .image.
func JQ(p fieldpath.Path) string {
	var b strings.Builder
	piped := false // the next field follows a select: it starts a new term
	field := func(name string) {
		if piped {
			b.WriteString(" | ")
			piped = false
		}
		switch {
		case jqIdentifier(name):
			b.WriteString("." + name)
		case b.Len() > 0 && !strings.HasSuffix(b.String(), " | "):
			// .a["b"]: jq 1.6 and gojq read no dot before a bracket
			// that follows a term.
			b.WriteString("[" + jqString(name) + "]")
		default:
			b.WriteString(".[" + jqString(name) + "]")
		}
	}
	for _, pe := range p {
		switch {
		case pe.FieldName != nil:
			field(*pe.FieldName)
		case pe.Index != nil:
			if piped {
				b.WriteString(" | .")
				piped = false
			}
			b.WriteString("[" + strconv.Itoa(*pe.Index) + "]")
		case pe.Key != nil:
			var conds []string
			for _, f := range *pe.Key {
				conds = append(conds, jqField(f.Name)+" == "+jqValue(f.Value))
			}
			b.WriteString(jqItems(piped) + "select(" + strings.Join(conds, " and ") + ")")
			piped = true
		case pe.Value != nil:
			b.WriteString(jqItems(piped) + "select(. == " + jqValue(*pe.Value) + ")")
			piped = true
		}
	}
	if b.Len() == 0 {
		return "."
	}
	return b.String()
}

// jqItems iterates a list: "[] | " after a field, ".[] | " after a select.
func jqItems(piped bool) string {
	if piped {
		return " | .[] | "
	}
	return "[] | "
}

// jqIdentifier tells whether a field can follow a dot in jq.
func jqIdentifier(s string) bool { return identifier(s, false) }

func jqField(name string) string {
	if jqIdentifier(name) {
		return "." + name
	}
	return ".[" + jqString(name) + "]"
}

// jqString is a jq string literal: JSON's, whose escapes jq reads alike
// (JSON never writes jq's \( interpolation).
func jqString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// jqValue is a jq literal of a key's value: JSON is jq.
func jqValue(v value.Value) string {
	b, err := json.Marshal(v.Unstructured())
	if err != nil {
		return "null"
	}
	return string(b)
}

// JSONPointer writes p as a JSON Pointer into obj: keyed and set list
// items become their index in obj's list. False when obj has no such
// item on the way.
func JSONPointer(obj any, p fieldpath.Path) (string, bool) {
	var b strings.Builder
	cur := obj
	for _, pe := range p {
		switch {
		case pe.FieldName != nil:
			b.WriteString("/" + pointerToken(*pe.FieldName))
		default:
			l, ok := cur.([]any)
			if !ok {
				return "", false
			}
			i := itemIndex(l, pe)
			if i < 0 {
				return "", false
			}
			b.WriteString("/" + strconv.Itoa(i))
		}
		var ok bool
		if cur, ok = LookupElement(cur, pe); !ok {
			return "", false
		}
	}
	return b.String(), true
}

// itemIndex is the index of the item pe names in l, -1 when none.
func itemIndex(l []any, pe fieldpath.PathElement) int {
	for i, item := range l {
		switch {
		case pe.Index != nil:
			if i == *pe.Index {
				return i
			}
		case pe.Key != nil:
			if m, ok := item.(map[string]any); ok && MatchKey(m, *pe.Key) {
				return i
			}
		case pe.Value != nil:
			if value.Equals(interfaceValue(item), *pe.Value) {
				return i
			}
		}
	}
	return -1
}

// pointerToken escapes a field name for a JSON Pointer.
func pointerToken(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}
