package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// The forced apply explain-conflict suggests for a file whose objects are
// in two namespaces works as pasted: kubectl apply -n refuses an object
// of another namespace, so the command has no -n.
func TestExplainConflictSeveralNamespaces(t *testing.T) {
	nsA, nsB := namespace(t), namespace(t)
	cm := func(ns, value string) string {
		return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\n  namespace: %s\ndata:\n  k: %s\n", ns, value)
	}
	apply(t, nsA, "other-tool", cm(nsA, "theirs"), false)
	apply(t, nsB, "other-tool", cm(nsB, "theirs"), false)
	file := filepath.Join(t.TempDir(), "multi.yaml")
	writeFile(t, file, cm(nsA, "mine")+"---\n"+cm(nsB, "mine"))
	res := ssa(t, "explain-conflict", "-f", file, "--color", "never")
	if res.code != 1 {
		t.Fatalf("exit %d, want 1\n%s%s", res.code, res.stdout, res.stderr)
	}
	want := "kubectl apply --server-side --force-conflicts -f " + file
	var forced int
	for _, line := range strings.Split(res.stdout, "\n") {
		if _, c, ok := strings.Cut(line, "$ kubectl apply "); ok {
			forced++
			if "kubectl apply "+c != want {
				t.Errorf("suggested %q, want %q", "kubectl apply "+c, want)
			}
		}
	}
	if forced != 2 {
		t.Fatalf("%d forced applies suggested, want 2:\n%s", forced, res.stdout)
	}
	// As pasted: kubectl's own apply, without -n.
	kubectlApplyFile(t, "", file, "server-side=true", "force-conflicts=true")
	mustSSA(t, 0, "explain-conflict", "-f", file)
	// kubectl refuses the -n the command carried before.
	if err := kubectlApplyFileErr(t, nsA, file, "server-side=true", "force-conflicts=true"); err == nil || !strings.Contains(err.Error(), "does not match the namespace") {
		t.Errorf("kubectl apply -n %s of both namespaces' objects: %v, want a refusal", nsA, err)
	}
}
