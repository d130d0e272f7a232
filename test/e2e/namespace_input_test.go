package e2e

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A file holding a Namespace and objects in it is read in order, as
// kubectl apply applies it: the creates in the new namespace are
// predicted, with a note, and --verify says it could not verify them
// (exit 4) instead of failing or agreeing. An object before its
// Namespace is still refused, as the apiserver would refuse it.
func TestNamespaceEarlierInTheInput(t *testing.T) {
	ns := namespace(t) + "-new"
	t.Cleanup(func() {
		_ = env.client.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{})
	})
	namespaceDoc := "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: " + ns + "\n"
	cmDoc := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: " + ns + "\ndata:\n  mode: fast\n"
	dir := t.TempDir()
	inOrder := filepath.Join(dir, "in-order.yaml")
	writeFile(t, inOrder, namespaceDoc+"---\n"+cmDoc)
	reversed := filepath.Join(dir, "reversed.yaml")
	writeFile(t, reversed, cmDoc+"---\n"+namespaceDoc)

	type report struct {
		Object struct {
			Kind string `json:"kind"`
		} `json:"object"`
		Action   string   `json:"action"`
		Warnings []string `json:"warnings"`
		Verify   *struct {
			Status string `json:"status"`
			Reason string `json:"reason"`
		} `json:"verify"`
	}
	list := func(out string) []report {
		t.Helper()
		var l struct {
			Items []report `json:"items"`
		}
		if err := json.Unmarshal([]byte(out), &l); err != nil || len(l.Items) != 2 {
			t.Fatalf("not a list of two reports (%v):\n%s", err, out)
		}
		return l.Items
	}
	note := `namespace "` + ns + `" does not exist yet: the input creates it`

	r := mustSSA(t, 0, "explain-conflict", "-f", inOrder, "-o", "json")
	items := list(r.stdout)
	if items[1].Object.Kind != "ConfigMap" || items[1].Action != "create" || !strings.Contains(strings.Join(items[1].Warnings, "\n"), note) {
		t.Errorf("the ConfigMap's create is not predicted with the note: %+v", items[1])
	}
	r = mustSSA(t, 0, "explain-conflict", "-f", inOrder)
	if !strings.Contains(r.stdout, note) {
		t.Errorf("the text view lacks the note:\n%s", r.stdout)
	}
	r = mustSSA(t, 1, "diff", "-f", inOrder)
	if !strings.Contains(r.stdout, "settings") || !strings.Contains(r.stdout, "fast") {
		t.Errorf("diff does not show the ConfigMap's create:\n%s", r.stdout)
	}

	// --verify: the Namespace is verified, the ConfigMap can't be.
	r = mustSSA(t, 4, "explain-conflict", "-f", inOrder, "--verify", "-o", "json")
	items = list(r.stdout)
	if v := items[0].Verify; v == nil || v.Status != "agrees" {
		t.Errorf("the Namespace's verify: %+v", v)
	}
	if v := items[1].Verify; v == nil || v.Status != "not-run" || !strings.Contains(v.Reason, "can't dry-run") {
		t.Errorf("the ConfigMap's verify: %+v", v)
	}
	if !strings.Contains(r.stderr, "1 of 2 object(s) can't be dry-run before what the input applies ahead of them exists (a Namespace") {
		t.Errorf("stderr: %s", r.stderr)
	}

	// The other order fails on the server too: one clear line, exit 2.
	for _, c := range []string{"explain-conflict", "diff"} {
		r = ssa(t, c, "-f", reversed)
		if r.code != 2 || !strings.Contains(r.stderr, `ConfigMap/`+ns+`/settings: namespace "`+ns+`" not found: the apply would fail`) {
			t.Errorf("%s of the reversed file: exit %d\nstdout:\n%s\nstderr:\n%s", c, r.code, r.stdout, r.stderr)
		}
	}

	// A Namespace whose own apply fails (a name the apiserver refuses)
	// does not exist for the objects after it either: they say why.
	refused := filepath.Join(dir, "refused.yaml")
	writeFile(t, refused, "apiVersion: v1\nkind: Namespace\nmetadata: {name: Bad_NS}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: Bad_NS}\n")
	for _, c := range []string{"explain-conflict", "diff"} {
		r = ssa(t, c, "-f", refused)
		if r.code != 2 || !strings.Contains(r.stderr, `ConfigMap/Bad_NS/c: namespace "Bad_NS" not found, and its apply earlier in the input fails`) {
			t.Errorf("%s of a refused Namespace and an object in it: exit %d\n%s", c, r.code, r.stderr)
		}
	}

	// As predicted, kubectl apply --server-side of the file succeeds; the
	// same file then predicts no change, and --verify agrees.
	kubectlApplyServerSide(t, inOrder)
	if _, err := env.client.CoreV1().ConfigMaps(ns).Get(context.Background(), "settings", metav1.GetOptions{}); err != nil {
		t.Fatalf("after kubectl apply --server-side: %v", err)
	}
	r = mustSSA(t, 0, "explain-conflict", "-f", inOrder, "--verify")
	if strings.Contains(r.stdout, "does not exist yet") || !strings.Contains(r.stdout, "agrees") {
		t.Errorf("after the apply:\n%s", r.stdout)
	}
	mustSSA(t, 0, "diff", "-f", inOrder)
}
