package remedy_test

import (
	"encoding/json"
	"testing"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/remedy"
)

func TestTargetCommands(t *testing.T) {
	full := remedy.Target{ResourceArg: "deployment.v1.apps/web", Namespace: "shop", ClusterFlags: []string{"--context=prod", "--kubeconfig=/home/me/my configs/k"},
		File: "app.yaml", FieldManager: "argo cd", Subresource: "scale"}
	tests := []struct {
		name string
		got  remedy.Command
		want string
	}{
		{"force apply", full.ForceApply(), `kubectl apply --server-side --force-conflicts '--field-manager=argo cd' --subresource=scale --context=prod '--kubeconfig=/home/me/my configs/k' -n shop -f app.yaml`},
		{"kubectl's manager, kustomize", remedy.Target{Kustomize: "overlays/prod", FieldManager: "kubectl"}.ForceApply(), `kubectl apply --server-side --force-conflicts -k overlays/prod`},
		{"standard input", remedy.Target{File: "STDIN"}.ForceApply(), `kubectl apply --server-side --force-conflicts -f MANIFEST`},
		{"ssa", full.SSA([]string{"handover"}, "--field", ".metadata.labels['a b']", "--from", "x"), `kubectl ssa handover deployment.v1.apps/web --context=prod '--kubeconfig=/home/me/my configs/k' -n shop --field '.metadata.labels['\''a b'\'']' --from x`},
		{"control characters", remedy.Target{ResourceArg: "cm/a\nb"}.SSA([]string{"who-owns"}), `kubectl ssa who-owns $'cm/a\nb'`},
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
