package defaults

import (
	"bytes"
	_ "embed" // the generated data
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

//go:generate sh -c "cd ../../test && go run ./cmd/gendefaults -o ../pkg/defaults/builtin.json"

//go:embed builtin.json
var builtinJSON []byte

// Outcome is what happens to a field an apply removes.
type Outcome int

const (
	// Removed: the field has no default; it disappears.
	Removed Outcome = iota
	// Reset: the apiserver sets the field back to Answer.Value.
	Reset
	// Depends: the field has a default that depends on other fields in a
	// way not known here; the apiserver may set it again.
	Depends
)

// Answer says what the apiserver does with one removed field.
type Answer struct {
	Outcome Outcome
	// Value is the default a Reset field gets, never nil: a field the
	// apiserver writes as null is Removed.
	Value any
	// Reason says, for Depends, what the default depends on.
	Reason string
}

// Source answers for the fields of one kind at one version.
type Source interface {
	// Removal tells what becomes of path p when an apply removes it.
	// ancestors are the values at p's proper prefixes in the object as
	// the apply leaves it (before the apiserver defaults it):
	// ancestors[0] is the whole object, ancestors[len(p)-1] p's parent.
	// Missing trailing ancestors may be nil.
	Removal(p fieldpath.Path, ancestors []any) Answer
}

// Kinds of defaults in the generated data.
const (
	// KindConstant: the default is Value.
	KindConstant = "constant"
	// KindRule: the default is computed by the named hand-written Rule.
	KindRule = "rule"
	// KindWhen: the default is chosen by the value of one other field.
	KindWhen = "when"
	// KindDepends: the default depends on other fields; no rule is known.
	KindDepends = "depends"
)

// Field is what the generated data says of one path of a kind: the
// default the apiserver gives it when it is absent.
type Field struct {
	// Path is the field's path in the apiserver's format, with [*] for
	// any list item and .* for any map key.
	Path string `json:"path"`
	// Default is one of the Kind constants.
	Default string `json:"default"`
	// Value is the constant default.
	Value any `json:"value,omitempty"`
	// Rule names the Rule that computes it.
	Rule string `json:"rule,omitempty"`
	// When chooses it by another field's value.
	When *When `json:"when,omitempty"`
	// Observed is how many probe objects lacked the field (evidence).
	Observed int `json:"observed"`
	// Empty: an empty list or map gets the default too (the defaulting
	// tests its length, not nil).
	Empty bool `json:"empty,omitempty"`
}

// When chooses a default by the value of another field: one of the
// ancestors' fields (a sibling of the removed field or of one of its
// ancestors).
type When struct {
	// Level is the index of the ancestor that holds the field
	// (0: the object).
	Level int `json:"level"`
	// Field is the deciding field's name in that ancestor.
	Field string `json:"field"`
	// Cases, one per value seen; a value not listed is not known.
	Cases []Case `json:"cases"`
}

// Case of a When.
type Case struct {
	// Is is CaseAbsent, CasePresent (any value) or a JSON-encoded value.
	Is string `json:"is"`
	// Set tells whether the field is set (to Value) or stays absent.
	Set   bool `json:"set"`
	Value any  `json:"value,omitempty"`
}

// Case keys besides JSON values.
const (
	CaseAbsent  = "absent"
	CasePresent = "present"
)

// Data is the generated file.
type Data struct {
	// Source says what generated it from which Kubernetes.
	Source string `json:"source"`
	// Kinds maps "group/version/Kind" ("v1/Pod" for the core group) to
	// the fields of that kind with a default.
	Kinds map[string][]Field `json:"kinds"`
}

// KindKey is the key of a kind in Data.Kinds.
func KindKey(gvk schema.GroupVersionKind) string {
	return gvk.GroupVersion().String() + "/" + gvk.Kind
}

var (
	builtinMu     sync.Mutex
	builtinTables = map[string]*Table{}
	builtinErrs   = map[string]error{}
)

// Parse reads generated data. Numbers become int64 or float64, as in
// unstructured objects.
func Parse(b []byte) (*Data, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	out := &Data{}
	if err := d.Decode(out); err != nil {
		return nil, fmt.Errorf("reading the defaults data: %w", err)
	}
	for k, fields := range out.Kinds {
		if err := check(k, fields); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// check normalizes the values of one kind's fields and refuses unknown
// default kinds and rules.
func check(kind string, fields []Field) error {
	for i := range fields {
		f := &fields[i]
		f.Value = Normalize(f.Value)
		if f.When != nil {
			for j := range f.When.Cases {
				f.When.Cases[j].Value = Normalize(f.When.Cases[j].Value)
			}
		}
		switch f.Default {
		case KindConstant, KindDepends, KindWhen:
		case KindRule:
			if ruleByName(f.Rule) == nil {
				return fmt.Errorf("defaults data: %s %s names unknown rule %q", kind, f.Path, f.Rule)
			}
		default:
			return fmt.Errorf("defaults data: %s %s: unknown default %q", kind, f.Path, f.Default)
		}
	}
	return nil
}

// Normalize turns the json.Numbers of a value decoded with UseNumber into
// int64 or float64, as in unstructured objects.
func Normalize(v any) any {
	switch t := v.(type) {
	case json.Number:
		if i, err := t.Int64(); err == nil {
			return i
		}
		f, _ := t.Float64()
		return f
	case map[string]any:
		for k, e := range t {
			t[k] = Normalize(e)
		}
	case []any:
		for i, e := range t {
			t[i] = Normalize(e)
		}
	}
	return v
}

// builtinKind decodes the fields of one kind from the generated file, and
// only those: decoding the whole file costs about 18 ms, more than the rest
// of a warm explain-conflict. The generator writes each kind on a line of
// its own that starts with its quoted key (TestBuiltinLazyEqualsParse
// holds it to that).
func builtinKind(key string) ([]Field, bool, error) {
	marker := []byte("\n" + quoteJSON(key) + ": [")
	i := bytes.Index(builtinJSON, marker)
	if i < 0 {
		return nil, false, nil
	}
	d := json.NewDecoder(bytes.NewReader(builtinJSON[i+len(marker)-1:]))
	d.UseNumber()
	var fields []Field
	if err := d.Decode(&fields); err != nil {
		return nil, false, fmt.Errorf("reading the defaults data of %s: %w", key, err)
	}
	if err := check(key, fields); err != nil {
		return nil, false, err
	}
	return fields, true, nil
}

func quoteJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// Builtin returns the defaults of a built-in kind at a version; false when
// the generated data does not know it (not a built-in kind, or a version
// newer than the data).
func Builtin(gvk schema.GroupVersionKind) (*Table, bool) {
	key := KindKey(gvk)
	builtinMu.Lock()
	defer builtinMu.Unlock()
	if t, ok := builtinTables[key]; ok {
		return t, t != nil
	}
	if builtinErrs[key] != nil {
		return nil, false
	}
	fields, ok, err := builtinKind(key)
	if err != nil {
		builtinErrs[key] = err
		return nil, false
	}
	if !ok {
		builtinTables[key] = nil
		return nil, false
	}
	t := NewTable(fields)
	builtinTables[key] = t
	return t, true
}

// BuiltinSource says which Kubernetes the built-in data came from.
func BuiltinSource() string {
	var head struct {
		Source string `json:"source"`
	}
	// The source is the first key of the file: decode up to it only.
	d := json.NewDecoder(bytes.NewReader(builtinJSON))
	if t, err := d.Token(); err != nil || t != json.Delim('{') {
		return "the generated defaults (unreadable)"
	}
	if k, err := d.Token(); err != nil || k != "source" {
		return "the generated defaults (unreadable)"
	}
	if err := d.Decode(&head.Source); err != nil {
		return "the generated defaults (unreadable)"
	}
	return head.Source
}

// Table answers for one built-in kind from the generated data.
type Table struct {
	root   *node
	fields []Field
}

// Fields returns the data's entries of the kind.
func (t *Table) Fields() []Field { return t.fields }

type node struct {
	children map[string]*node
	field    *Field
}

// Pattern segments: a field name, any list item, any map key.
const (
	segItem = "[*]"
	segKey  = "*"
)

// NewTable indexes fields by path.
func NewTable(fields []Field) *Table {
	t := &Table{root: &node{}, fields: fields}
	for i := range fields {
		n := t.root
		for _, s := range SplitPattern(fields[i].Path) {
			if n.children == nil {
				n.children = map[string]*node{}
			}
			c, ok := n.children[s]
			if !ok {
				c = &node{}
				n.children[s] = c
			}
			n = c
		}
		n.field = &fields[i]
	}
	return t
}

// SplitPattern splits a pattern path into segments: field names, "[*]"
// and "*".
func SplitPattern(p string) []string {
	var out []string
	for p != "" {
		switch {
		case strings.HasPrefix(p, "[*]"):
			out = append(out, segItem)
			p = p[3:]
		case strings.HasPrefix(p, "."):
			p = p[1:]
			j := strings.IndexAny(p, ".[")
			if j < 0 {
				j = len(p)
			}
			out = append(out, p[:j])
			p = p[j:]
		default:
			// Not a pattern this package writes: keep the rest whole so
			// that it matches nothing.
			out = append(out, p)
			p = ""
		}
	}
	return out
}

// Lookup returns the data's entry for a concrete path, nil if none.
func (t *Table) Lookup(p fieldpath.Path) *Field {
	n := t.root
	for _, pe := range p {
		if n.children == nil {
			return nil
		}
		var next *node
		if pe.FieldName != nil {
			if next = n.children[*pe.FieldName]; next == nil {
				next = n.children[segKey]
			}
		} else {
			next = n.children[segItem]
		}
		if next == nil {
			return nil
		}
		n = next
	}
	return n.field
}

// Removal implements Source.
func (t *Table) Removal(p fieldpath.Path, ancestors []any) Answer {
	f := t.Lookup(p)
	if f == nil {
		return Answer{Outcome: Removed}
	}
	return f.Answer(lastName(p), ancestors)
}

func lastName(p fieldpath.Path) string {
	if len(p) > 0 && p[len(p)-1].FieldName != nil {
		return *p[len(p)-1].FieldName
	}
	return ""
}

// Answer evaluates the entry for a field named name (the map key, for a
// map entry) whose ancestors are given.
func (f *Field) Answer(name string, ancestors []any) Answer {
	a := f.answer(name, ancestors)
	if a.Outcome == Reset && a.Value == nil {
		// Written as null (a field without omitempty): it holds no value.
		return Answer{Outcome: Removed}
	}
	return a
}

func (f *Field) answer(name string, ancestors []any) Answer {
	switch f.Default {
	case KindConstant:
		return Answer{Outcome: Reset, Value: copyValue(f.Value)}
	case KindRule:
		r := ruleByName(f.Rule)
		v, set, known := r.Eval(name, ancestors)
		switch {
		case !known:
			return Answer{Outcome: Depends, Reason: r.Depends}
		case set:
			return Answer{Outcome: Reset, Value: v}
		}
		return Answer{Outcome: Removed}
	case KindWhen:
		return f.When.answer(ancestors)
	}
	return Answer{Outcome: Depends, Reason: "other fields"}
}

func (w *When) answer(ancestors []any) Answer {
	var holder map[string]any
	if w.Level < len(ancestors) {
		holder, _ = ancestors[w.Level].(map[string]any)
	}
	v, present := holder[w.Field]
	key := CaseAbsent
	if present {
		b, err := json.Marshal(v)
		if err != nil {
			return Answer{Outcome: Depends, Reason: "the value of " + w.Field}
		}
		key = string(b)
	}
	for _, c := range w.Cases {
		if c.Is == key || (present && c.Is == CasePresent) {
			if !c.Set {
				return Answer{Outcome: Removed}
			}
			return Answer{Outcome: Reset, Value: copyValue(c.Value)}
		}
	}
	return Answer{Outcome: Depends, Reason: "the value of " + w.Field}
}
