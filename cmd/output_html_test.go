package cmd_test

import (
	"strings"
	"testing"
)

// -o html writes one page of every object, at the end: two objects, one
// document.
func TestWhoOwnsHTML(t *testing.T) {
	r := run(t, "who-owns", "--local", "-f", "testdata/deployment.yaml", "-f", "testdata/configmap.yaml", "-o", "html")
	if r.err != nil {
		t.Fatalf("%v\n%s", r.err, r.errOut)
	}
	if n := strings.Count(r.out, "<!DOCTYPE html>"); n != 1 {
		t.Fatalf("%d documents, want 1:\n%s", n, r.out)
	}
	for _, want := range []string{"Deployment/", "ConfigMap/", "<nav aria-label=\"Objects\">"} {
		if !strings.Contains(r.out, want) {
			t.Errorf("the page does not hold %q", want)
		}
	}
}
