package remedy_test

import (
	"encoding/json"
	"testing"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/remedy"
)

func TestTargetCommands(t *testing.T) {
	full := remedy.Target{ResourceArg: "deployment.v1.apps/web", Namespace: "shop", ClusterFlags: []string{"--context=prod", "--kubeconfig=/home/me/my configs/k"},
		File: "app.yaml", FieldManager: "argo cd", Subresource: "scale"}
	helmNext := remedy.Target{Namespace: "shop", File: "next.yaml", FieldManager: "helm", HelmRelease: "web"}
	tests := []struct {
		name string
		got  remedy.Command
		want string
	}{
		{"force apply", full.ForceApply(), `kubectl apply --server-side --force-conflicts '--field-manager=argo cd' --subresource=scale --context=prod '--kubeconfig=/home/me/my configs/k' -n shop -f app.yaml`},
		{"kubectl's manager, kustomize", remedy.Target{Kustomize: "overlays/prod", FieldManager: "kubectl"}.ForceApply(), `kubectl apply --server-side --force-conflicts -k overlays/prod`},
		// kubectl apply -n refuses a manifest in another namespace: the
		// objects of a file in several namespaces carry theirs.
		{"objects in several namespaces", remedy.Target{ResourceArg: "cm/a", Namespace: "other", File: "multi.yaml", MixedNamespaces: true}.ForceApply(), `kubectl apply --server-side --force-conflicts -f multi.yaml`},
		{"several namespaces: the object's own command", remedy.Target{ResourceArg: "cm/a", Namespace: "other", MixedNamespaces: true}.SSA([]string{"who-owns"}), `kubectl ssa who-owns cm/a -n other`},
		{"several namespaces: explain the file", remedy.Target{Namespace: "other", File: "multi.yaml", MixedNamespaces: true}.InputLine([]string{"kubectl", "ssa", "explain-conflict"}, "-f", "multi.yaml"), `kubectl ssa explain-conflict -f multi.yaml`},
		{"standard input", remedy.Target{File: "STDIN"}.ForceApply(), `kubectl apply --server-side --force-conflicts -f MANIFEST`},
		{"ssa", full.SSA([]string{"handover"}, "--field", ".metadata.labels['a b']", "--from", "x"), `kubectl ssa handover deployment.v1.apps/web --context=prod '--kubeconfig=/home/me/my configs/k' -n shop --field '.metadata.labels['\''a b'\'']' --from x`},
		{"control characters", remedy.Target{ResourceArg: "cm/a\nb"}.SSA([]string{"who-owns"}), `kubectl ssa who-owns $'cm/a\nb'`},
		// kubectl apply of a Helm render would drop the label and
		// annotations Helm adds: a placeholder; kubectl ssa adds them.
		{"helm: force apply of a render", helmNext.ForceApply(), `kubectl apply --server-side --force-conflicts --field-manager=helm -n shop -f MANIFEST`},
		{"helm: kubectl ssa on a render", remedy.Command(helmNext.SSAInput()), `--helm-release web -f next.yaml`},
		{"helm: kubectl ssa on the release itself", remedy.Command(remedy.Target{HelmRelease: "web", HelmRevision: 3}.SSAInput()), `--helm-release web --helm-revision 3`},
		{"helm: kubectl ssa on a piped render", remedy.Command(remedy.Target{HelmRelease: "web", File: "STDIN"}.SSAInput()), `--helm-release web -f MANIFEST`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.got.String(); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
			b, err := json.Marshal(tt.got)
			if err != nil {
				t.Fatal(err)
			}
			var s string
			if err := json.Unmarshal(b, &s); err != nil || s != tt.want {
				t.Errorf("JSON %s", b)
			}
		})
	}
}
