package pathlang

import (
	"strings"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/value"
)

// Pattern matches paths: a path written in the path language (see
// syntax.go) where "*" is one element, "**" any number of them, and "*"
// and "?" inside names and values are wildcards: .spec.template.**,
// .metadata.labels.*, .spec.containers[name=app].*,
// .spec.containers[0].image.
//
// Matching runs the pattern as a set of states over the path's elements,
// once each, never backtracking: at most (len(pattern)+1) states per
// element (per dot of an element's name, for names written the
// apiserver's way), whatever the number of "**".
type Pattern struct {
	src  string
	segs []segment
}

// NewPattern reads a pattern.
func NewPattern(s string) (*Pattern, error) {
	segs, err := parseSegments(s, syntaxPattern, nil)
	if err != nil {
		return nil, err
	}
	return &Pattern{src: s, segs: segs}, nil
}

// Match tells whether p matches. List items are compared as they are
// written: [0] matches only an item a path names by position.
func (m *Pattern) Match(p fieldpath.Path) bool { return m.match(p, nil, nil) }

// MatchIn tells whether p, a path of obj, matches: list items are also
// found in obj, so [0] matches the first container however the path names
// it, and [name=app] an item a path names by position.
func (m *Pattern) MatchIn(p fieldpath.Path, obj any) bool {
	return m.match(p, &items{obj: obj, path: p}, nil)
}

// items finds the list items of a path in its object, on demand.
type items struct {
	obj  any
	path fieldpath.Path
	// vals[k] is the value at path[:k]; done is how far it is known.
	vals  []any
	found []bool
}

// at returns the position and value of the item path[j] names.
func (it *items) at(j int) (int, any, bool) {
	if it == nil {
		return 0, nil, false
	}
	if it.vals == nil {
		it.vals = append(make([]any, 0, len(it.path)+1), it.obj)
		it.found = append(make([]bool, 0, len(it.path)+1), true)
	}
	for k := len(it.vals) - 1; k < j; k++ {
		var v any
		ok := false
		if it.found[k] {
			v, ok = LookupElement(it.vals[k], it.path[k])
		}
		it.vals = append(it.vals, v)
		it.found = append(it.found, ok)
	}
	if !it.found[j] {
		return 0, nil, false
	}
	l, ok := it.vals[j].([]any)
	if !ok {
		return 0, nil, false
	}
	pe := it.path[j]
	switch {
	case pe.Index != nil:
		if *pe.Index < len(l) {
			return *pe.Index, l[*pe.Index], true
		}
	case pe.Key != nil:
		for i, item := range l {
			if m, ok := item.(map[string]any); ok && MatchKey(m, *pe.Key) {
				return i, item, true
			}
		}
	case pe.Value != nil:
		for i, item := range l {
			if value.Equals(interfaceValue(item), *pe.Value) {
				return i, item, true
			}
		}
	}
	return 0, nil, false
}

// match runs the pattern over p; steps, when set, counts the states it
// visits.
func (m *Pattern) match(p fieldpath.Path, it *items, steps *int) bool {
	n := len(m.segs)
	cur := make([]bool, n+1)
	next := make([]bool, n+1)
	cur[0] = true
	m.closure(cur)
	for j, pe := range p {
		clear(next)
		for i := 0; i < n; i++ {
			if !cur[i] {
				continue
			}
			if steps != nil {
				*steps++
			}
			seg := &m.segs[i]
			switch seg.kind {
			case segAnyDepth:
				next[i] = true
			case segAny:
				next[i+1] = true
			default:
				if seg.matchElement(pe, j, it) {
					next[i+1] = true
				}
			}
		}
		if pe.FieldName != nil && strings.IndexByte(*pe.FieldName, '.') >= 0 {
			m.acrossDots(cur, *pe.FieldName, next, steps)
		}
		m.closure(next)
		cur, next = next, cur
		alive := false
		for _, s := range cur {
			alive = alive || s
		}
		if !alive {
			return false
		}
	}
	return cur[n]
}

// closure adds the states a "**" reaches by matching no element.
func (m *Pattern) closure(states []bool) {
	for i, seg := range m.segs {
		if states[i] && seg.kind == segAnyDepth {
			states[i+1] = true
		}
	}
}

// acrossDots matches one field name written the apiserver's way, as
// several plain names: .metadata.labels.app.kubernetes.io/name has the
// element "app.kubernetes.io/name", which the names app, kubernetes and
// io/name match in turn. A state is a pattern position and an offset in
// the name; each is visited once.
func (m *Pattern) acrossDots(cur []bool, name string, next []bool, steps *int) {
	type state struct{ i, off int }
	var queue []state
	seen := map[state]bool{}
	push := func(s state) {
		if !seen[s] {
			seen[s] = true
			queue = append(queue, s)
		}
	}
	for i, on := range cur[:len(m.segs)] {
		if on {
			if lit, ok := m.segs[i].plainName(); ok && strings.HasPrefix(name, lit+".") {
				push(state{i + 1, len(lit) + 1})
			}
		}
	}
	for k := 0; k < len(queue); k++ {
		s := queue[k]
		if steps != nil {
			*steps++
		}
		if s.i == len(m.segs) {
			continue
		}
		seg := &m.segs[s.i]
		switch seg.kind {
		case segAnyDepth:
			push(state{s.i + 1, s.off})
		case segField:
			rest := name[s.off:]
			if seg.name.match(rest) {
				next[s.i+1] = true
			}
			if lit, ok := seg.plainName(); ok && strings.HasPrefix(rest, lit+".") {
				push(state{s.i + 1, s.off + len(lit) + 1})
			}
		}
	}
}

// plainName is the name of a field segment without wildcards.
func (seg *segment) plainName() (string, bool) {
	if seg.kind != segField || seg.name.glob != nil || seg.name.lit == "" {
		return "", false
	}
	return seg.name.lit, true
}

// matchElement tells whether seg matches pe, element j of the path; it
// finds list items in the object when the two name an item differently.
func (seg *segment) matchElement(pe fieldpath.PathElement, j int, it *items) bool {
	switch seg.kind {
	case segField:
		return pe.FieldName != nil && seg.name.match(*pe.FieldName)
	case segIndex:
		if pe.Index != nil {
			return *pe.Index == seg.index
		}
		if pe.FieldName != nil {
			return false
		}
		i, _, ok := it.at(j)
		return ok && i == seg.index
	case segKey:
		if pe.FieldName != nil || pe.Value != nil {
			return false
		}
		var item map[string]any
		resolved := false
		for _, k := range seg.keys {
			if pe.Key != nil {
				if f, ok := findField(*pe.Key, k.name); ok {
					if !k.val.matches(f) {
						return false
					}
					continue
				}
			}
			// A field that is not (part of) the key: look at the item.
			if !resolved {
				resolved = true
				_, v, _ := it.at(j)
				item, _ = v.(map[string]any)
			}
			v, ok := item[k.name]
			if !ok || !k.val.matches(interfaceValue(v)) {
				return false
			}
		}
		return true
	case segValue:
		if pe.Value != nil {
			return seg.val.matches(*pe.Value)
		}
		if pe.Index != nil {
			_, v, ok := it.at(j)
			return ok && seg.val.matches(interfaceValue(v))
		}
	}
	return false
}

func findField(fl value.FieldList, name string) (value.Value, bool) {
	for _, f := range fl {
		if f.Name == name {
			return f.Value, true
		}
	}
	return nil, false
}
