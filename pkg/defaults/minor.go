package defaults

import (
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// introduced are the defaults of the generated tables (Kubernetes 1.37)
// that older apiservers do not apply: a field that got its default in a
// later minor. Each was found by make test-versions (the diff corpora
// against a real apiserver of the older minor).
var introduced = []struct {
	kind  string // KindKey
	path  string
	minor int // the first minor that defaults it
}{
	{"apps/v1/StatefulSet", ".spec.updateStrategy.rollingUpdate.maxUnavailable", 37},
	{"storage.k8s.io/v1/CSIDriver", ".spec.preventPodSchedulingIfMissing", 37},
}

// VersionDependent tells whether a kind's defaults differ between the
// minors kubectl-ssa knows: only then is the server's version needed.
func VersionDependent(gvk schema.GroupVersionKind) bool {
	key := KindKey(gvk)
	for _, in := range introduced {
		if in.kind == key {
			return true
		}
	}
	return false
}

// BuiltinFor is Builtin for an apiserver of the given minor (0: the
// tables' own, 1.37): without the defaults introduced after it.
func BuiltinFor(gvk schema.GroupVersionKind, minor int) (*Table, bool) {
	t, ok := Builtin(gvk)
	if !ok || minor == 0 {
		return t, ok
	}
	key := KindKey(gvk)
	var drop []string
	for _, in := range introduced {
		if in.kind == key && minor < in.minor {
			drop = append(drop, in.path)
		}
	}
	if len(drop) == 0 {
		return t, ok
	}
	return NewTable(withoutPaths(t.Fields(), drop)), true
}

// withoutPaths drops the entries of paths, and their keys from the
// constant values of the entries above them. Paths are of field names.
func withoutPaths(fields []Field, paths []string) []Field {
	out := make([]Field, 0, len(fields))
	for _, f := range fields {
		keep := true
		for _, p := range paths {
			switch {
			case f.Path == p:
				keep = false
			case strings.HasPrefix(p, f.Path+"."):
				rest := strings.Split(strings.TrimPrefix(p, f.Path+"."), ".")
				f.Value = withoutKey(f.Value, rest)
				if f.When != nil {
					w := *f.When
					w.Cases = append([]Case(nil), w.Cases...)
					for i := range w.Cases {
						w.Cases[i].Value = withoutKey(w.Cases[i].Value, rest)
					}
					f.When = &w
				}
			}
		}
		if keep {
			out = append(out, f)
		}
	}
	return out
}

// withoutKey returns a copy of v without the value at keys.
func withoutKey(v any, keys []string) any {
	m, ok := v.(map[string]any)
	if !ok || len(keys) == 0 {
		return v
	}
	c := make(map[string]any, len(m))
	for k, x := range m {
		c[k] = x
	}
	if len(keys) == 1 {
		delete(c, keys[0])
		return c
	}
	if x, ok := c[keys[0]]; ok {
		c[keys[0]] = withoutKey(x, keys[1:])
	}
	return c
}
