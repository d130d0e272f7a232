package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestGatesFailClosed: a CI gate never passes on something that was not
// checked. A namespace that does not exist, an input without objects,
// kinds that could not be listed are errors (exit 2); a create is a
// change (exit 1); a name the apiserver refuses is an error; an
// unreachable server is one error line.
func TestGatesFailClosed(t *testing.T) {
	ns := namespace(t)
	dir := t.TempDir()
	file := func(name, text string) string {
		f := filepath.Join(dir, name)
		if err := os.WriteFile(f, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return f
	}
	empties := map[string]string{
		"empty file":   file("empty.yaml", ""),
		"--- only":     file("dashes.yaml", "---\n---\n"),
		"empty List":   file("list.yaml", "apiVersion: v1\nkind: List\nitems: []\n"),
		"null":         file("null.yaml", "null\n"),
		"comment only": file("comment.yaml", "# nothing here\n"),
	}
	type gate struct {
		name   string
		args   []string
		code   int
		stderr string
	}
	gates := []gate{
		{"audit of a missing namespace", []string{"audit", "-n", "nosuchns-" + ns}, 2, `namespace "nosuchns-`},
		{"audit --fail-on info of a missing namespace", []string{"audit", "--fail-on", "info", "-n", "nosuchns-" + ns}, 2, "not found"},
		{"migrate --check of a missing namespace", []string{"migrate", "--all-kinds", "-n", "nosuchns-" + ns, "--check"}, 2, "not found"},
		{"audit of a kind in a missing namespace", []string{"audit", "configmaps", "-n", "nosuchns-" + ns}, 2, "not found"},
	}
	for what, f := range empties {
		for _, c := range []string{"audit", "migrate", "diff", "explain-conflict", "who-owns"} {
			gates = append(gates, gate{c + " of " + what, []string{c, "-n", ns, "-f", f}, 2, "no objects"})
		}
		gates = append(gates, gate{"migrate --check of " + what, []string{"migrate", "--check", "-n", ns, "-f", f}, 2, "no objects"})
	}
	sa := file("sa.yaml", "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: robot\n")
	cm := file("cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: empty\n")
	bad := file("bad.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: Bad_Name\n")
	badSvc := file("svc.yaml", "apiVersion: v1\nkind: Service\nmetadata:\n  name: web.svc\nspec:\n  ports: [{port: 80}]\n")
	gates = append(gates,
		gate{"diff of a create that sets only the name", []string{"diff", "-n", ns, "-f", sa}, 1, ""},
		gate{"diff of an empty ConfigMap's create", []string{"diff", "-n", ns, "-f", cm, "-o", "json"}, 1, ""},
		gate{"diff of a name the apiserver refuses", []string{"diff", "-n", ns, "-f", bad}, 2, `ConfigMap/` + ns + `/Bad_Name: the apiserver refuses the name`},
		gate{"explain-conflict of a name the apiserver refuses", []string{"explain-conflict", "-n", ns, "-f", badSvc}, 2, "must not contain dots"},
		gate{"version against an unreachable server", []string{"version", "--server", "https://127.0.0.1:1"}, 2, "server version unknown"},
		gate{"who-owns against an unreachable server", []string{"who-owns", "cm", "--server", "https://127.0.0.1:1"}, 2, "127.0.0.1:1"},
	)
	for _, g := range gates {
		t.Run(g.name, func(t *testing.T) {
			r := ssa(t, g.args...)
			if r.code != g.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, g.code, r.stdout, r.stderr)
			}
			if !strings.Contains(r.stderr, g.stderr) {
				t.Errorf("stderr lacks %q:\n%s", g.stderr, r.stderr)
			}
			if g.code == 2 {
				// One line: no log lines, no "Backups go to".
				if lines := strings.Split(strings.TrimSpace(r.stderr), "\n"); len(lines) != 1 || !strings.HasPrefix(lines[0], "error: ") {
					t.Errorf("stderr is not one error line:\n%s", r.stderr)
				}
			}
		})
	}
	// The server agrees: the refused names are refused.
	for _, m := range []string{"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: Bad_Name\n", "apiVersion: v1\nkind: Service\nmetadata:\n  name: web.svc\nspec:\n  ports: [{port: 80}]\n"} {
		u := parse(t, m)
		u.SetNamespace(ns)
		if _, err := resourceFor(t, u).Apply(context.Background(), u.GetName(), u, metav1.ApplyOptions{FieldManager: "kubectl", DryRun: []string{metav1.DryRunAll}}); err == nil {
			t.Errorf("the server took the name %s that the prediction refuses", u.GetName())
		}
	}
}
