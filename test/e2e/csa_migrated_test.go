package e2e

import (
	"path/filepath"
	"strings"
	"testing"
)

// The state a migration of client-side apply to a server-side manager
// can leave: the last-applied annotation holds replicas, owned with them
// by "argocd-controller"'s Apply entry, and no client-side entry is left.
// Then kubectl autoscale: the autoscaler note hands replicas over only
// from a manager that holds them, and the printed handover works as
// pasted.
func TestAutoscalerNoteAfterServerSideMigration(t *testing.T) {
	ns := namespace(t)
	taken := parse(t, csaWeb)
	taken.SetNamespace(ns)
	annotation, err := taken.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	taken.SetAnnotations(map[string]string{lastAppliedKey: string(annotation)})
	b, err := taken.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	apply(t, ns, "argocd-controller", string(b), false)
	file := filepath.Join(t.TempDir(), "web.yaml")
	writeFile(t, file, csaWeb)
	kubectlAutoscaleV1(t, ns, 1, 3, 80)
	res := ssa(t, "explain-conflict", "-n", ns, "-f", file, "--field-manager=argocd-controller", "--color", "never")
	var handovers []string
	for _, line := range strings.Split(res.stdout, "\n") {
		if _, c, ok := strings.Cut(line, "$ kubectl ssa handover "); ok {
			handovers = append(handovers, c)
		}
	}
	want := "deployment.v1.apps/web -n " + ns + " --field .spec.replicas --from argocd-controller --to kube-controller-manager"
	if len(handovers) != 1 || handovers[0] != want {
		t.Fatalf("handovers suggested %q, want [%q]\n%s%s", handovers, want, res.stdout, res.stderr)
	}
	// As pasted.
	mustSSA(t, 0, append([]string{"handover"}, strings.Fields(handovers[0])...)...)
}
