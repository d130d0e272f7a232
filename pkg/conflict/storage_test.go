package conflict_test

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/conflict"
)

const twoVersions = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gizmos.example.com}
spec:
  group: example.com
  names: {plural: gizmos, kind: Gizmo}
  scope: Namespaced
  conversion: {strategy: %s}
  versions:
  - name: v1
    served: true
    storage: false
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, properties: {size: {type: string}, extra: {type: string, default: x}, list: {type: array, items: {type: object, properties: {a: {type: string}, b: {type: string}}}}}}
  - name: v2
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: string}
              list: {type: array, items: {type: object, properties: {a: {type: string}}}}
              labels: {type: object, additionalProperties: {type: string}}
              free: {type: object, x-kubernetes-preserve-unknown-fields: true}
`

// A custom resource applied at v1 is pruned by v2's schema, where it is
// stored: unknown properties go at every depth, maps of any keys and
// preserved subtrees stay.
func TestStorageSchemaPrunes(t *testing.T) {
	gvk := schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Gizmo"}
	crd := manifest(t, fmtCRD("None"))
	st := conflict.StorageSchema(crd, gvk)
	if st == nil {
		t.Fatal("no storage schema")
	}
	var obj, want map[string]interface{}
	_ = yaml.Unmarshal([]byte(`{apiVersion: example.com/v1, kind: Gizmo, metadata: {name: g, labels: {a: b}}, status: {x: 1}, spec: {size: l, extra: x, list: [{a: "1", b: "2"}], labels: {k: v}, free: {any: {thing: 1}}}}`), &obj)
	_ = yaml.Unmarshal([]byte(`{apiVersion: example.com/v1, kind: Gizmo, metadata: {name: g, labels: {a: b}}, spec: {size: l, list: [{a: "1"}], labels: {k: v}, free: {any: {thing: 1}}}}`), &want)
	st.Prune(obj)
	if diff := cmp.Diff(want, obj); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
	if conflict.StorageSchema(crd, gvk.GroupKind().WithVersion("v2")) != nil {
		t.Error("the storage version itself is pruned")
	}
	if conflict.StorageSchema(manifest(t, fmtCRD("Webhook")), gvk) != nil {
		t.Error("a webhook's conversion is guessed")
	}
}

func fmtCRD(strategy string) string {
	return fmt.Sprintf(twoVersions, strategy)
}
