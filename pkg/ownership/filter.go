package ownership

import (
	"fmt"
	"sort"
	"strings"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/pathlang"
)

// Filter selects parts of a report. Zero values select everything.
type Filter struct {
	// Managers are globs over manager names.
	Managers []string
	// Fields are path patterns (see Pattern).
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
func (f Filter) ownerMatch(o v1alpha1.Owner) bool {
	if len(f.Managers) > 0 {
		ok := false
		for _, g := range f.Managers {
			if pathlang.Glob(g, o.Manager) {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	if f.Operation != "" && !strings.EqualFold(f.Operation, string(o.Operation)) {
		return false
	}
	if f.Subresource != "" {
		want := f.Subresource
		if want == "-" || want == "none" {
			want = ""
		}
		if want != string(o.Subresource) {
			return false
		}
	}
	return true
}

// IsZero tells whether f selects everything.
func (f Filter) IsZero() bool {
	return len(f.Managers) == 0 && len(f.Fields) == 0 && f.Operation == "" && f.Subresource == "" && !f.Shared && !f.Unowned
}

func (f Filter) ownerFiltered() bool {
	return len(f.Managers) > 0 || f.Operation != "" || f.Subresource != ""
}

// Validate reads the manager globs and field patterns, so that a
// mistyped one is an error rather than a filter that matches nothing.
func (f Filter) Validate() error {
	for _, g := range f.Managers {
		if err := ValidateGlob(g); err != nil {
			return fmt.Errorf("--manager: %w", err)
		}
	}
	_, err := f.patterns()
	return err
}

func (f Filter) patterns() ([]*pathlang.Pattern, error) {
	out := make([]*pathlang.Pattern, 0, len(f.Fields))
	for _, s := range f.Fields {
		m, err := pathlang.NewPattern(s)
		if err != nil {
			return nil, fmt.Errorf("--field: %w", err)
		}
		out = append(out, m)
	}
	return out, nil
}

// Apply returns a copy of r with only what f selects. Fields are kept when
// one of their owners passes the owner conditions; a kept field still lists
// all of its owners, so shared ownership stays visible. A field pattern
// that can't be read selects nothing (Validate says why).
func (f Filter) Apply(r *Report) *Report {
	out := *r
	out.Filtered = r.Filtered || !f.IsZero()
	matchers, err := f.patterns()
	pathOK := func(p fieldpath.Path) bool {
		if err != nil {
			return false
		}
		if len(matchers) == 0 {
			return true
		}
		for _, m := range matchers {
			if m.MatchIn(p, r.Content) {
				return true
			}
		}
		return false
	}

	out.Fields = []v1alpha1.Field{}
	if !f.Unowned {
		for _, fl := range r.Fields {
			if f.Shared && len(fl.Owners) < 2 {
				continue
			}
			if !pathOK(fieldpath.Path(fl.Path)) {
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

	out.Unowned = []pathlang.Path{}
	add := func(p fieldpath.Path) { out.Unowned = append(out.Unowned, pathlang.Path(p)) }
	if !f.Shared && !f.ownerFiltered() {
		for _, u := range r.Unowned {
			up := fieldpath.Path(u)
			if pathOK(up) {
				add(up)
				continue
			}
			// Unowned paths are top-most: the paths a pattern selects can
			// lie below one (.spec.strategy.type under .spec.strategy).
			if len(matchers) > 0 && err == nil {
				if v, ok := pathlang.Lookup(r.Content, up); ok {
					matchBelow(v, up, pathOK, add)
				}
			}
		}
	}
	// Managers: those the owner conditions select and, when fields are
	// selected too, that own one of the fields kept (-o managers shows
	// the managers of the selection); nobody owns an unowned field.
	owning := map[string]bool{}
	for _, fl := range out.Fields {
		for _, o := range fl.Owners {
			owning[identity(o)] = true
		}
	}
	fieldFiltered := len(f.Fields) > 0 || f.Shared || f.Unowned
	out.Managers = []v1alpha1.Manager{}
	for _, m := range r.Managers {
		if f.ownerMatch(m.Owner) && (!fieldFiltered || owning[identity(m.Owner)]) {
			out.Managers = append(out.Managers, m)
		}
	}
	return &out
}

// Unmatched returns the field patterns of f that select no path of r's
// object, owned or not, whoever owns it: a mistyped path (.spec.replicaz)
// rather than a filter that happens to select nothing here.
func (f Filter) Unmatched(r *Report) []string {
	var out []string
	for _, s := range f.Fields {
		got := Filter{Fields: []string{s}}.Apply(r)
		if len(got.Fields) > 0 || len(got.Unowned) > 0 {
			continue
		}
		// Identity and server-set metadata (.metadata.name) are neither
		// owned nor listed as unowned, but they are there.
		if p, err := pathlang.ParsePath(s, r.Content); err == nil {
			if _, ok := pathlang.Lookup(r.Content, p); ok {
				continue
			}
		}
		out = append(out, s)
	}
	return out
}

// identity is the owner's managedFields identity, without its time.
func identity(o v1alpha1.Owner) string {
	return o.Manager + "\x00" + string(o.Operation) + "\x00" + string(o.Subresource) + "\x00" + o.APIVersion
}

// matchBelow calls add for the top-most paths below p (holding v) that ok
// accepts, in object order. Nothing below p is owned, so list items are
// addressed by index, as the unowned paths are.
func matchBelow(v any, p fieldpath.Path, ok func(fieldpath.Path) bool, add func(fieldpath.Path)) {
	visit := func(child any, pe fieldpath.PathElement) {
		cp := append(p.Copy(), pe)
		if ok(cp) {
			add(cp)
			return
		}
		matchBelow(child, cp, ok, add)
	}
	switch t := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			visit(t[k], fieldpath.PathElement{FieldName: &k})
		}
	case []any:
		for i, item := range t {
			visit(item, fieldpath.IndexElement(i))
		}
	}
}
