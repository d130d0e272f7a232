package render

import (
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"testing"

	"github.com/pmezard/go-difflib/difflib"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
)

// The text of each line's path, its prefix shared with the line before,
// is the path's String: over owned lines, unowned ones and list items.
func TestPathStringsOfLines(t *testing.T) {
	for _, f := range []string{"deployment.yaml", "configmap.yaml", "secret.yaml", "widget.yaml"} {
		b, err := os.ReadFile("testdata/" + f)
		if err != nil {
			t.Fatal(err)
		}
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(b, &u.Object); err != nil {
			t.Fatal(err)
		}
		r, err := ownership.Analyze(u, ownership.Options{})
		if err != nil {
			t.Fatal(err)
		}
		bl := &blamer{r: r}
		bl.mapping(r.Content, r.Tree, nil, fieldpath.Path{}, "", "")
		paths := make([]fieldpath.Path, len(bl.lines))
		for i, l := range bl.lines {
			paths[i] = l.path
		}
		got := pathStrings(paths)
		for i, p := range paths {
			if got[i] != p.String() {
				t.Errorf("%s: line %d (%q): %q, want %q", f, i, bl.lines[i].text, got[i], p.String())
			}
		}
	}
}

// difflibRows are the rows difflib's SequenceMatcher gives, as diffRows
// once took them from it.
func difflibRows(a, b []string) []diffRow {
	var rows []diffRow
	for _, op := range difflib.NewMatcherWithJunk(a, b, false, nil).GetOpCodes() {
		switch op.Tag {
		case 'e':
			for i := 0; i < op.I2-op.I1; i++ {
				rows = append(rows, diffRow{op: ' ', a: op.I1 + i, b: op.J1 + i})
			}
		default:
			for i := op.I1; i < op.I2; i++ {
				rows = append(rows, diffRow{op: '-', a: i, b: -1})
			}
			for j := op.J1; j < op.J2; j++ {
				rows = append(rows, diffRow{op: '+', a: -1, b: j})
			}
		}
	}
	return rows
}

// diffRows aligns lines exactly as difflib does: over random line lists
// with few distinct lines (repeated lines make ties and nested matches),
// edits of a long one, and the edge cases.
func TestDiffRowsAsDifflib(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	random := func(n, alphabet int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = string(rune('a' + rnd.IntN(alphabet)))
		}
		return out
	}
	type pair struct{ a, b []string }
	cases := []pair{{nil, nil}, {[]string{"x"}, nil}, {nil, []string{"x"}}, {[]string{"x"}, []string{"x"}}}
	for n := 0; n < 3000; n++ {
		alphabet := 1 + rnd.IntN(8)
		cases = append(cases, pair{random(rnd.IntN(40), alphabet), random(rnd.IntN(40), alphabet)})
	}
	long := make([]string, 800)
	for i := range long {
		long[i] = fmt.Sprintf("line %d", i%300)
	}
	for n := 0; n < 50; n++ {
		b := append([]string{}, long...)
		for k := rnd.IntN(60); k > 0; k-- {
			switch i := rnd.IntN(len(b)); rnd.IntN(3) {
			case 0:
				b[i] = "changed"
			case 1:
				b = append(b[:i], b[i+1:]...)
			default:
				b = append(b[:i], append([]string{long[rnd.IntN(len(long))]}, b[i:]...)...)
			}
		}
		cases = append(cases, pair{long, b}, pair{b, long})
	}
	for _, c := range cases {
		if got, want := diffRows(c.a, c.b), difflibRows(c.a, c.b); !reflect.DeepEqual(got, want) {
			t.Fatalf("%q -> %q:\n got %v\nwant %v", c.a, c.b, got, want)
		}
	}
}
