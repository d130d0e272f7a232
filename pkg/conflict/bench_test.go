package conflict_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-ssa/kubectl-ssa/internal/benchdata"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/conflict"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
)

type bigCase struct {
	name string
	live *unstructured.Unstructured
	// reapply is the owner's own manifest again; conflicting changes a
	// value another manager shares.
	owner       string
	reapply     *unstructured.Unstructured
	other       string
	conflicting *unstructured.Unstructured
	conflictAt  string
}

func bigCases() []bigCase {
	return []bigCase{
		{
			name: "configmap-5000-keys", live: benchdata.ConfigMap(5000),
			owner: "helm", reapply: benchdata.ConfigMapManifest(5000),
			other: "argocd-controller", conflicting: benchdata.ConfigMapManifest(5000, 5),
			conflictAt: ".data.key-00005.conf",
		},
		{
			name: "deployment-50-containers", live: benchdata.Deployment(50),
			owner: "platform", reapply: benchdata.DeploymentManifest(50),
			other: "team", conflicting: benchdata.DeploymentManifest(50, 7),
			conflictAt: `.spec.template.spec.containers[name="c07"].image`,
		},
	}
}

// The benchmark objects' managedFields are what the apiserver's field
// manager records: re-applying the owner's manifest changes nothing, and
// a changed shared value conflicts with the co-owner only.
func TestBenchdataMatchesTheFieldManager(t *testing.T) {
	schema := conflict.BuiltinSchema()
	for _, c := range bigCases() {
		t.Run(c.name, func(t *testing.T) {
			r, err := conflict.Simulate(conflict.Input{Live: c.live, Applied: c.reapply, FieldManager: c.owner, Schema: schema, HasStatus: true})
			if err != nil {
				t.Fatal(err)
			}
			if r.Message != "" || len(r.Removed) != 0 || len(r.Retained) != 0 {
				t.Fatalf("re-apply: message %q, removed %v, retained %v", r.Message, r.Removed, r.Retained)
			}
			if diff := cmp.Diff(fieldsOf(t, c.live.GetManagedFields()), fieldsOf(t, r.ManagedFields)); diff != "" {
				t.Errorf("re-applying changed managedFields (-live +result):\n%s", diff)
			}
			r, err = conflict.Simulate(conflict.Input{Live: c.live, Applied: c.conflicting, FieldManager: c.owner, Schema: schema, HasStatus: true})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, cf := range r.Conflicts {
				got = append(got, cf.Manager+" "+cf.Path.APIServerString())
			}
			if diff := cmp.Diff([]string{c.other + " " + c.conflictAt}, got); diff != "" {
				t.Errorf("conflicts (-want +got):\n%s", diff)
			}
		})
	}
}

func fieldsOf(t *testing.T, entries []metav1.ManagedFieldsEntry) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, e := range entries {
		s, err := ownership.DecodeEntry(e)
		if err != nil {
			t.Fatal(err)
		}
		out[e.Manager+" "+string(e.Operation)+" "+e.Subresource] = s.Size()
	}
	return out
}

// BenchmarkSimulate predicts applies to large objects with the built-in
// schema: a re-apply by the owner, and an apply by the owner that
// conflicts with a co-owner.
func BenchmarkSimulate(b *testing.B) {
	schema := conflict.BuiltinSchema()
	for _, c := range bigCases() {
		for _, run := range []struct {
			name    string
			applied *unstructured.Unstructured
		}{{"reapply", c.reapply}, {"conflict", c.conflicting}} {
			b.Run(c.name+"/"+run.name, func(b *testing.B) {
				in := conflict.Input{Live: c.live, Applied: run.applied, FieldManager: c.owner, Schema: schema, HasStatus: true}
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					if _, err := conflict.Simulate(in); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
