package render

import (
	"os"
	"testing"

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
