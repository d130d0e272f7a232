package pathlang_test

import (
	"testing"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/pathlang"
)

// roundTripPaths are paths whose printed form is easy to get wrong.
var roundTripPaths = []fieldpath.Path{
	path(field("spec"), field("replicas")),
	path(field("metadata"), field("labels"), field("app.kubernetes.io/name")),
	path(field("data"), field("")),
	path(field("data"), field("1st")),
	path(field("data"), field(`a"b\c`)),
	path(field("data"), field("tab\there")),
	path(field("data"), field("esc\x1b[31m")),
	path(field("data"), field("\xff\xfe invalid")),
	path(field("data"), field("f:spec")),
	path(field("data"), field("k:{\"a\":1}")),
	path(field("data"), field("*")),
	path(field("data"), field("**")),
	path(field("data"), field("a[0]")),
	path(field("data"), field("{.x}")),
	path(field("data"), field("é")),
	path(field("env"), key("name", `a,b]="c"\d`), field("value")),
	path(field("x"), key("a", true, "b", int64(-2), "c", "z")),
	path(field("x"), key("a b", "q", "c=d", 1.5)),
	path(field("x"), key("n", nil)),
	path(field("f"), val("a.b[0]")),
	path(field("f"), val(int64(443))),
	path(field("f"), val(0.5)),
	path(field("f"), val(1e21)),
	path(field("f"), val(map[string]any{"a": []any{int64(1), "x"}})),
	path(field("f"), val([]any{})),
	path(field("l"), fieldpath.IndexElement(0), fieldpath.IndexElement(12)),
	path(fieldpath.IndexElement(3)),
	path(),
}

// The printed form of a path reads back as the same path, without the
// object: it never depends on which keys exist.
func TestPathStringRoundTrip(t *testing.T) {
	for _, p := range roundTripPaths {
		s := pathlang.Path(p).String()
		got, err := pathlang.ParsePath(s)
		if err != nil {
			t.Errorf("ParsePath(%q): %v", s, err)
			continue
		}
		if !got.Equals(p) {
			t.Errorf("ParsePath(%q) = %s, want %s", s, pathlang.Path(got), s)
		}
		// As a pattern, the printed form matches its path.
		m, err := pathlang.NewPattern(s)
		if err != nil {
			t.Errorf("NewPattern(%q): %v", s, err)
			continue
		}
		if !m.Match(p) {
			t.Errorf("NewPattern(%q) does not match its own path", s)
		}
	}
}

// FuzzPathRoundTrip: whatever ParsePath reads, the printed form of the
// result reads back as the same path and prints the same.
func FuzzPathRoundTrip(f *testing.F) {
	for _, p := range roundTripPaths {
		f.Add(pathlang.Path(p).String())
		f.Add(p.String())
	}
	for _, s := range []string{
		`{.spec.containers[?(@.name=="app")].image}`, `.spec.containers[name=app].*`, `spec.containers[0].image`,
		`f:spec.f:containers.k:{"name":"app"}.f:image`, `.a[=x].b['q\'z']`, `.x[k:{"a":1.5,"b":null}]`, `.a\.b\[c`,
		`.ports[?(@.containerPort==80 && @.protocol=="TCP")]`, `.a[v:{"x":[1,2]}]`, `.a["\u00e9\U0001F600\x00"]`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := pathlang.ParsePath(s)
		if err != nil {
			return
		}
		printed := pathlang.Path(p).String()
		back, err := pathlang.ParsePath(printed)
		if err != nil {
			t.Fatalf("ParsePath(%q) = %s, which does not read back: %v", s, printed, err)
		}
		if !back.Equals(p) {
			t.Fatalf("ParsePath(%q) = %s, which reads back as %s", s, printed, pathlang.Path(back))
		}
		if again := pathlang.Path(back).String(); again != printed {
			t.Fatalf("printed %q, then %q", printed, again)
		}
	})
}
