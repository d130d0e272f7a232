package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kubectl-ssa/kubectl-ssa/internal/testkit"
)

// TestInputURLBounded: a URL given to -f is read as a file would be, up
// to the per-input bound (an endless body is cut off, not read until
// memory runs out) and within --request-timeout (a server that never
// finishes answering is given up on).
func TestInputURLBounded(t *testing.T) {
	ns := namespace(t)
	apply(t, ns, "a", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"one"},"data":{"x":"1"}}`, false)
	srv := testkit.InputServer(t, map[string]string{"/one.yaml": fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: one, namespace: %s}\n", ns)})
	if r := mustSSA(t, 0, "who-owns", "-f", srv.URL+"/one.yaml", "-o", "json"); !strings.Contains(r.stdout, `"name": "one"`) {
		t.Errorf("-f URL:\n%s", r.stdout)
	}
	for path, want := range map[string]string{
		"/endless.yaml": "endless.yaml holds more than 67108864 bytes",
		"/slow.yaml":    "slow.yaml did not answer in full within 2s",
	} {
		r := ssa(t, "who-owns", "-f", srv.URL+path, "--request-timeout", "2s")
		if r.code == 0 || !strings.Contains(r.stderr, want) {
			t.Errorf("-f %s: exit %d, want an error with %q\n%s", path, r.code, want, r.stderr)
		}
	}
}
