package pathlang

import (
	"strings"
	"testing"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// manyStars is a pattern of 30 "**" that can't match: a backtracking
// matcher tries every way of splitting the path among them (the old
// one took 34 s on a Deployment).
var manyStars = strings.Repeat(".**", 30) + ".nomatch"

func deepPath(n int) fieldpath.Path {
	p := make(fieldpath.Path, 0, n)
	for i := 0; i < n; i++ {
		name := "level"
		if i%3 == 0 {
			name = "a.b.c" // dotted names add states: read across the dots
		}
		p = append(p, fieldpath.PathElement{FieldName: &name})
	}
	return p
}

// The matcher visits each (pattern position, element) pair at most once
// (per dot of a name): the work is bounded by the sizes, not by the number
// of ways "**" can split a path.
func TestPatternMatchIsLinear(t *testing.T) {
	for _, tt := range []struct {
		pattern string
		n       int
		want    bool
	}{
		{pattern: manyStars, n: 40, want: false},
		{pattern: manyStars, n: 400, want: false},
		{pattern: strings.Repeat(".**", 30) + ".level", n: 41, want: true},
		{pattern: strings.Repeat(".*.**", 15) + ".a.b.x", n: 60, want: false},
		{pattern: strings.Repeat(".**.a.b.c", 10), n: 61, want: true},
	} {
		m, err := NewPattern(tt.pattern)
		if err != nil {
			t.Fatal(err)
		}
		p := deepPath(tt.n)
		steps := 0
		if got := m.match(p, nil, &steps); got != tt.want {
			t.Errorf("%s on %d elements = %v, want %v", tt.pattern, tt.n, got, tt.want)
		}
		dots := 0
		for _, pe := range p {
			dots += strings.Count(*pe.FieldName, ".")
		}
		// Each element: one visit per live state, plus one per state and
		// dot for names read across their dots.
		limit := (len(m.segs) + 1) * (tt.n + dots)
		if steps > limit {
			t.Errorf("%s on %d elements took %d steps, more than (segments+1)*(elements+dots) = %d", tt.pattern, tt.n, steps, limit)
		}
	}
}

func BenchmarkPatternManyDoubleStars(b *testing.B) {
	m, err := NewPattern(manyStars)
	if err != nil {
		b.Fatal(err)
	}
	p := deepPath(40)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if m.Match(p) {
			b.Fatal("matched")
		}
	}
}
