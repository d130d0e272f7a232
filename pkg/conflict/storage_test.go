package conflict_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-ssa/kubectl-ssa/internal/testkit"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/conflict"
)

// A custom resource applied at v1 is pruned by v2's schema, where it is
// stored (testdata/crd/gizmos.yaml): unknown properties go at every
// depth, maps of any keys and preserved subtrees stay.
func TestStorageSchemaPrunes(t *testing.T) {
	gvk := schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Gizmo"}
	crd := manifest(t, testkit.Fixture(t, "crd/gizmos.yaml"))
	st := conflict.StorageSchema(crd, gvk)
	if st == nil {
		t.Fatal("no storage schema")
	}
	var obj, want map[string]any
	_ = yaml.Unmarshal([]byte(`{apiVersion: example.com/v1, kind: Gizmo, metadata: {name: g, labels: {a: b}}, status: {x: 1}, spec: {size: l, extra: x, list: [{a: "1", b: "2"}], labels: {k: v}, free: {any: {thing: 1}}}}`), &obj)
	_ = yaml.Unmarshal([]byte(`{apiVersion: example.com/v1, kind: Gizmo, metadata: {name: g, labels: {a: b}}, spec: {size: l, list: [{a: "1"}], labels: {k: v}, free: {any: {thing: 1}}}}`), &want)
	st.Prune(obj)
	if diff := cmp.Diff(want, obj); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
	if conflict.StorageSchema(crd, gvk.GroupKind().WithVersion("v2")) != nil {
		t.Error("the storage version itself is pruned")
	}
	// The same CRD converted by a webhook.
	webhook := crd.DeepCopy()
	if err := unstructured.SetNestedField(webhook.Object, "Webhook", "spec", "conversion", "strategy"); err != nil {
		t.Fatal(err)
	}
	if conflict.StorageSchema(webhook, gvk) != nil {
		t.Error("a webhook's conversion is guessed")
	}
}
