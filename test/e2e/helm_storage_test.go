package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kubectl-ssa/kubectl-ssa/internal/testkit"
)

// TestHelmCraftedStorage: storage objects that anyone who may create
// Secrets in the namespace can write, labelled as Helm labels its own.
// Only the revision the command needs is read, bounded, and it must be
// what its name says: each crafted one is one line of error naming it
// (exit 2, as any input error), or the right revision is read.
func TestHelmCraftedStorage(t *testing.T) {
	ns := namespace(t)
	padded := func(release string, revision, pad int) string {
		t.Helper()
		v, err := testkit.HelmPadded(fmt.Sprintf(`{"name":%q,"namespace":%q,"version":%d,"info":{"status":"deployed"},"manifest":"`, release, ns, revision), pad, `"}`)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	// Ten deployed revisions: nine of 200 MiB once decompressed under a
	// real one, the highest. Reading them all cost gigabytes.
	helmWrite(t, ns, "web", helmChart(2, "nginx:1.27"), true)
	bomb := padded("web", 9, 200<<20)
	for n := 1; n <= 9; n++ {
		helmStorageSecret(t, ns, "web", n, "deployed", bomb)
	}
	helmReleaseSecret(t, ns, "web", 10, "deployed", "ssa", helmChart(2, "nginx:1.27"))
	r := mustSSA(t, 0, "diff", "-n", ns, "--helm-release", "web")
	if want := "# helm release web, revision 10 (deployed), from Secret/" + ns + "/sh.helm.release.v1.web.v10: applied server-side"; !strings.Contains(r.stdout, want) {
		t.Errorf("ten deployed revisions: the header does not say %q:\n%s%s", want, r.stdout, r.stderr)
	}

	// 700 MiB of spaces: as large as a Secret's 1 MiB can hold.
	helmStorageSecret(t, ns, "bomb", 1, "deployed", padded("bomb", 1, 700<<20))
	var many, dup strings.Builder
	for i := 0; i <= 3000; i++ {
		fmt.Fprintf(&many, "---\n# Source: many/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c%d\n", i)
	}
	helmReleaseSecret(t, ns, "many", 1, "deployed", "ssa", many.String())
	dup.WriteString(helmChart(2, "nginx:1.27"))
	dup.WriteString("---\n# Source: web/templates/again.yaml\napiVersion: v1\nkind: Service\nmetadata:\n  name: web\nspec:\n  ports:\n  - port: 81\n")
	helmReleaseSecret(t, ns, "dup", 1, "deployed", "ssa", dup.String())
	// The Secret of release "named" holds one named "web".
	other, err := testkit.HelmRelease(map[string]any{"name": "web", "namespace": ns, "version": 1, "info": map[string]any{"status": "deployed"}, "manifest": helmChart(2, "nginx:1.27")})
	if err != nil {
		t.Fatal(err)
	}
	helmStorageSecret(t, ns, "named", 1, "deployed", other)

	const todo = ": Helm did not write it; delete it, or give another revision with --helm-revision"
	tests := []struct {
		release, want string
	}{
		{"bomb", "error: Secret/" + ns + "/sh.helm.release.v1.bomb.v1: cannot decode the helm release it holds: larger than 16 MiB once decompressed, more than Helm's storage can hold (1 MiB compressed): not a release Helm wrote\n"},
		{"many", "error: Secret/" + ns + "/sh.helm.release.v1.many.v1: its manifest has 3001 documents, more than the 3000 objects kubectl-ssa reads of a release (charts render a few hundred): delete it if Helm did not write it, or give another revision with --helm-revision\n"},
		{"dup", "error: Secret/" + ns + "/sh.helm.release.v1.dup.v1: its manifest has Service/" + ns + "/web twice, which helm install refuses" + todo + "\n"},
		{"named", "error: Secret/" + ns + `/sh.helm.release.v1.named.v1: the release inside is named "web", not "named" as the object is` + todo + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.release, func(t *testing.T) {
			r := ssa(t, "diff", "-n", ns, "--helm-release", tt.release)
			if r.code != 2 || r.stdout != "" || r.stderr != tt.want {
				t.Errorf("exit %d, stdout %q\nstderr %q\nwant   %q", r.code, r.stdout, r.stderr, tt.want)
			}
		})
	}
}
