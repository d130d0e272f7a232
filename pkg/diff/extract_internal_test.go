package diff

import (
	"fmt"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-ssa/kubectl-ssa/internal/benchdata"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/conflict"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
)

// extractWhole is what Extract computed before it restricted the object
// to each entry: structured-merge-diff's extraction over the whole typed
// object.
func extractWhole(t *testing.T, obj *unstructured.Unstructured, tc managedfields.TypeConverter, e metav1.ManagedFieldsEntry) map[string]any {
	t.Helper()
	set, err := ownership.DecodeEntry(e)
	if err != nil {
		t.Fatal(err)
	}
	whole := obj.DeepCopy()
	if ownership.IsSecret(obj.GetAPIVersion(), obj.GetKind()) {
		data, _ := obj.Object["data"].(map[string]any)
		withStringData(whole.Object, data, set)
	}
	tv, err := tc.ObjectToTyped(whole, typed.AllowDuplicates)
	if err != nil {
		t.Fatal(err)
	}
	var opts []typed.ExtractItemsOption
	if e.Operation != metav1.ManagedFieldsOperationApply {
		opts = append(opts, typed.WithAppendKeyFields())
	}
	u, _ := tv.ExtractItems(set.Leaves(), opts...).AsValue().Unstructured().(map[string]any)
	out := &unstructured.Unstructured{Object: u}
	if u == nil {
		out.Object = map[string]any{}
	}
	out.SetAPIVersion(obj.GetAPIVersion())
	out.SetKind(obj.GetKind())
	out.SetName(obj.GetName())
	if ns := obj.GetNamespace(); ns != "" {
		out.SetNamespace(ns)
	}
	return out.Object
}

func readFixture(t *testing.T, name string) *unstructured.Unstructured {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(b, &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

// withEntry adds an Update entry of manager owning the fieldsV1 given.
func withEntry(t *testing.T, u *unstructured.Unstructured, manager, fieldsV1 string) *unstructured.Unstructured {
	t.Helper()
	j, err := yaml.YAMLToJSON([]byte(fieldsV1))
	if err != nil {
		t.Fatal(err)
	}
	u.SetManagedFields(append(u.GetManagedFields(), metav1.ManagedFieldsEntry{
		Manager: manager, Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: u.GetAPIVersion(),
		FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(string(j)),
	}))
	return u
}

// Restricting the object to each entry before extracting changes no
// extract: every entry of objects with maps, keyed lists, set lists,
// atomic fields, subresources, a Secret's stringData, and entries that
// name items the object no longer has.
func TestExtractMatchesWholeObjectExtraction(t *testing.T) {
	deploy := readFixture(t, "../render/testdata/deployment.yaml")
	withEntry(t, deploy, "kubectl-set-image", `{"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{"f:image":{}}}}}}}`)
	withEntry(t, deploy, "stale", `{"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"gone\"}":{".":{},"f:image":{}}}}}},"f:metadata":{"f:labels":{"f:gone":{}}}}`)
	withEntry(t, deploy, "whole-template", `{"f:spec":{"f:template":{}}}`)
	deploy.SetFinalizers([]string{"example.com/a", "example.com/b", "example.com/c"})
	withEntry(t, deploy, "finalizer-b", `{"f:metadata":{"f:finalizers":{"v:\"example.com/b\"":{}}}}`)
	withEntry(t, deploy, "finalizers", `{"f:metadata":{"f:finalizers":{".":{},"v:\"example.com/a\"":{},"v:\"example.com/c\"":{}}}}`)
	secret := readFixture(t, "../render/testdata/secret.yaml")
	withEntry(t, secret, "string-data", `{"f:stringData":{".":{},"f:password":{}}}`)
	objs := map[string]*unstructured.Unstructured{
		"deployment":            deploy,
		"configmap":             readFixture(t, "../render/testdata/configmap.yaml"),
		"secret":                secret,
		"bench-deployment":      benchdata.Deployment(3),
		"bench-configmap":       benchdata.ConfigMap(20),
		"bench-many-managers":   benchdata.ManyManagers(5),
		"no-managed-fields-map": readFixture(t, "../render/testdata/configmap-no-managed-fields.yaml"),
	}
	tc := conflict.BuiltinSchema()
	for name, obj := range objs {
		x := NewExtractor(obj, tc)
		for _, e := range obj.GetManagedFields() {
			t.Run(name+"/"+e.Manager+"/"+e.Subresource, func(t *testing.T) {
				want := extractWhole(t, obj, tc, e)
				got, err := x.Extract(e)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(want, got.Object); diff != "" {
					t.Errorf("extract (-whole object +restricted):\n%s", diff)
				}
			})
		}
	}
}

// BenchmarkExtractAllEntries extracts every entry of an object with
// 10,000 Apply managers, as extract --all-managers does without its YAML
// input and output (BenchmarkManyManagers in cmd runs the command).
func BenchmarkExtractAllEntries(b *testing.B) {
	obj := benchdata.ManyManagers(10000)
	tc := conflict.BuiltinSchema()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		x := NewExtractor(obj, tc)
		for j, e := range obj.GetManagedFields() {
			out, err := x.Extract(e)
			if err != nil {
				b.Fatal(err)
			}
			if key := fmt.Sprintf("key-%05d.conf", j); out.Object["data"].(map[string]any)[key] == nil {
				b.Fatalf("the extract of %s lacks %s: %v", e.Manager, key, out.Object)
			}
		}
	}
}
