package cmd_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-ssa/kubectl-ssa/cmd"
	"github.com/kubectl-ssa/kubectl-ssa/internal/benchdata"
)

// BenchmarkManyManagers runs the commands that read every managedFields
// entry over a saved object with 10,000 Apply managers, as a user types
// them: kubectl-ssa's own loops are linear in the entries (the apiserver
// does not cap Apply managers; extract --all-managers once took minutes).
// diff and explain-conflict also run the apiserver's field manager, whose
// merge (structured-merge-diff's addBackOwnedItems) unions the managers'
// sets one by one: that part grows faster, as it does in the apiserver.
func BenchmarkManyManagers(b *testing.B) {
	const managers = 10000
	raw, err := yaml.Marshal(benchdata.ManyManagers(managers).Object)
	if err != nil {
		b.Fatal(err)
	}
	file := filepath.Join(b.TempDir(), "many.yaml")
	if err := os.WriteFile(file, raw, 0o600); err != nil {
		b.Fatal(err)
	}
	apply := filepath.Join(b.TempDir(), "apply.yaml")
	changed := benchdata.ManyManagers(1)
	unstructured.RemoveNestedField(changed.Object, "metadata", "managedFields")
	changed.Object["data"] = map[string]any{"key-00005.conf": "changed"}
	if raw, err = yaml.Marshal(changed.Object); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(apply, raw, 0o600); err != nil {
		b.Fatal(err)
	}
	b.Setenv("KUBECONFIG", filepath.Join(b.TempDir(), "no-such-kubeconfig"))
	cases := []struct {
		name string
		args []string
		// want is printed once per manager.
		want string
	}{
		{"extract-all-managers", []string{"extract", "--local", "-f", file, "--all-managers"}, "\n# ConfigMap/default/many: manager-"},
		{"extract-one-manager", []string{"extract", "--local", "-f", file, "--manager", fmt.Sprintf("manager-%05d", managers-1)}, fmt.Sprintf("key-%05d.conf", managers-1)},
		{"who-owns", []string{"who-owns", "--local", "-f", file}, "\n.data[\"key-"},
		{"who-owns-blame", []string{"who-owns", "--local", "-f", file, "-o", "blame"}, "manager-"},
		{"who-owns-tree", []string{"who-owns", "--local", "-f", file, "-o", "tree"}, "manager-"},
		{"who-owns-wide", []string{"who-owns", "--local", "-f", file, "-o", "wide"}, "\n.data[\"key-"},
		{"diff", []string{"diff", "--local", "--live-file", file, "-f", apply, "--field-manager", "manager-00005"}, "\n#   manager-"},
		{"explain-conflict", []string{"explain-conflict", "--local", "--live-file", file, "-f", apply, "--field-manager", "manager-00005"}, "succeeds without conflicts"},
		{"who-owns-managers", []string{"who-owns", "--local", "-f", file, "-o", "managers"}, "\nmanager-"},
	}
	for _, bc := range cases {
		b.Run(bc.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				streams, _, out, errOut := genericiooptions.NewTestIOStreams()
				root := cmd.NewRootCmd(streams)
				root.SetArgs(bc.args)
				var exit *cmd.ExitError
				if err := root.ExecuteContext(context.Background()); err != nil && (!errors.As(err, &exit) || exit.Code != cmd.CodeFound) {
					b.Fatalf("%v: %s", err, errOut)
				}
				if i > 0 {
					continue
				}
				wantN := managers - 1
				if bc.args[len(bc.args)-2] == "--manager" || bc.name == "explain-conflict" {
					wantN = 1
				}
				if n := strings.Count("\n"+out.String(), bc.want); n < wantN {
					b.Fatalf("%q printed %d times, want at least %d:\n%.2000s", bc.want, n, wantN, out)
				}
			}
		})
	}
}
