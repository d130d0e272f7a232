package ownership

import (
	"sort"
	"strings"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// Filter selects parts of a report. Zero values select everything.
type Filter struct {
	// Managers are globs over manager names.
	Managers []string
	// Fields are path globs (see PathMatcher).
	Fields []string
	// Operation is Apply or Update (case-insensitive).
	Operation string
	// Subresource matches an entry's subresource; "-" or "none" selects
	// entries written through the main resource.
	Subresource string
	// Shared keeps fields with two or more owners.
	Shared bool
	// Unowned keeps only the unowned fields.
	Unowned bool
}

// ownerFilter tells whether an owner passes the owner-level conditions.
func (f Filter) ownerMatch(o Owner) bool {
	if len(f.Managers) > 0 {
		ok := false
		for _, g := range f.Managers {
			if Glob(g, o.Manager) {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	if f.Operation != "" && !strings.EqualFold(f.Operation, o.Operation) {
		return false
	}
	if f.Subresource != "" {
		want := f.Subresource
		if want == "-" || want == "none" {
			want = ""
		}
		if want != o.Subresource {
			return false
		}
	}
	return true
}

func (f Filter) ownerFiltered() bool {
	return len(f.Managers) > 0 || f.Operation != "" || f.Subresource != ""
}

// Apply returns a copy of r with only what f selects. Fields are kept when
// one of their owners passes the owner conditions; a kept field still lists
// all of its owners, so shared ownership stays visible.
func (f Filter) Apply(r *Report) *Report {
	out := *r
	matchers := make([]*PathMatcher, 0, len(f.Fields))
	for _, g := range f.Fields {
		matchers = append(matchers, NewPathMatcher(g))
	}
	pathOK := func(p fieldpath.Path) bool {
		if len(matchers) == 0 {
			return true
		}
		for _, m := range matchers {
			if m.Match(p) {
				return true
			}
		}
		return false
	}

	out.Managers = []Manager{}
	for _, m := range r.Managers {
		if f.ownerMatch(m.Owner) {
			out.Managers = append(out.Managers, m)
		}
	}

	out.Fields = []Field{}
	if !f.Unowned {
		for _, fl := range r.Fields {
			if f.Shared && len(fl.Owners) < 2 {
				continue
			}
			if !pathOK(fl.PathElements) {
				continue
			}
			if f.ownerFiltered() {
				ok := false
				for _, o := range fl.Owners {
					if f.ownerMatch(o) {
						ok = true
						break
					}
				}
				if !ok {
					continue
				}
			}
			out.Fields = append(out.Fields, fl)
		}
	}

	out.Unowned, out.UnownedPaths = []string{}, nil
	add := func(p fieldpath.Path) {
		out.Unowned = append(out.Unowned, p.String())
		out.UnownedPaths = append(out.UnownedPaths, p)
	}
	if !f.Shared && !f.ownerFiltered() {
		for _, u := range r.UnownedPaths {
			if pathOK(u) {
				add(u)
				continue
			}
			// Unowned paths are top-most: the paths a glob selects can
			// lie below one (.spec.strategy.type under .spec.strategy).
			if len(matchers) > 0 {
				if v, ok := Lookup(r.Content, u); ok {
					matchBelow(v, u, pathOK, add)
				}
			}
		}
	}
	return &out
}

// matchBelow calls add for the top-most paths below p (holding v) that ok
// accepts, in object order. Nothing below p is owned, so list items are
// addressed by index, as the unowned paths are.
func matchBelow(v interface{}, p fieldpath.Path, ok func(fieldpath.Path) bool, add func(fieldpath.Path)) {
	visit := func(child interface{}, pe fieldpath.PathElement) {
		cp := append(p.Copy(), pe)
		if ok(cp) {
			add(cp)
			return
		}
		matchBelow(child, cp, ok, add)
	}
	switch t := v.(type) {
	case map[string]interface{}:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			visit(t[k], fieldpath.PathElement{FieldName: &k})
		}
	case []interface{}:
		for i, item := range t {
			visit(item, fieldpath.IndexElement(i))
		}
	}
}
