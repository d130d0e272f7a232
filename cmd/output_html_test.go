package cmd_test

import (
	"os"
	"path/filepath"
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

// explain-conflict and diff write their page at the end and exit as
// their text views do; diff's page is written even where
// KUBECTL_EXTERNAL_DIFF names a program, which it does not run.
func TestApplyHTML(t *testing.T) {
	manifest := filepath.Join(t.TempDir(), "ci.yaml")
	if err := os.WriteFile(manifest, []byte("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop}\nspec: {replicas: 7}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBECTL_EXTERNAL_DIFF", "false")
	for command, want := range map[string]string{"explain-conflict": "CONFLICT", "diff": "The apply fails"} {
		r := run(t, command, "--local", "--live-file", "testdata/deployment.yaml", "-f", manifest, "--field-manager", "ci", "-o", "html")
		if r.code != 1 {
			t.Fatalf("%s: exit %d, want 1 (a conflict): %v\n%s", command, r.code, r.err, r.errOut)
		}
		if n := strings.Count(r.out, "<!DOCTYPE html>"); n != 1 {
			t.Errorf("%s: %d documents, want 1", command, n)
		}
		for _, s := range []string{want, ".spec.replicas", "kubectl"} {
			if !strings.Contains(r.out, s) {
				t.Errorf("%s's page does not hold %q", command, s)
			}
		}
	}
}
