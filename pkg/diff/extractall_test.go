package diff_test

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-ssa/kubectl-ssa/internal/testkit"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/conflict"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/diff"
)

const (
	cmA = `
apiVersion: v1
kind: ConfigMap
metadata:
  name: a
  namespace: shop
  managedFields:
  - manager: argocd
    operation: Apply
    apiVersion: v1
    fieldsType: FieldsV1
    fieldsV1: {"f:data": {"f:x": {}}}
  - manager: nobody
    operation: Update
    apiVersion: v1
    fieldsType: FieldsV1
    fieldsV1: {}
data: {x: "1", y: "2"}
`
	cmB = `
apiVersion: v1
kind: ConfigMap
metadata:
  name: b
  namespace: shop
  managedFields:
  - manager: editor
    operation: Update
    apiVersion: v1
    fieldsType: FieldsV1
    fieldsV1: {"f:data": {"f:y": {}}}
data: {y: "2"}
`
	secret = `
apiVersion: v1
kind: Secret
metadata:
  name: s
  namespace: shop
  managedFields:
  - manager: argocd
    operation: Apply
    apiVersion: v1
    fieldsType: FieldsV1
    fieldsV1: {"f:data": {"f:password": {}}}
data: {password: UzNDUjNU}
`
)

func extractAll(t *testing.T, o diff.ExtractOptions, manifests ...string) ([]diff.Extracted, []error, error) {
	t.Helper()
	var objs []*unstructured.Unstructured
	for _, m := range manifests {
		objs = append(objs, testkit.Object(t, m))
	}
	src, err := conflict.NewOfflineSource(objs, nil)
	if err != nil {
		t.Fatal(err)
	}
	return diff.ExtractObjects(context.Background(), src, objs, o)
}

func TestExtractObjectsSkipsObjectsWithoutTheManager(t *testing.T) {
	out, skipped, err := extractAll(t, diff.ExtractOptions{Selector: diff.Selector{Manager: "argocd"}}, cmA, cmB)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 1 || out[0].Object.GetName() != "a" || out[0].Owner.Manager != "argocd" {
		t.Fatalf("extracted %+v", out)
	}
	if data := out[0].Doc.Object["data"]; len(data.(map[string]any)) != 1 {
		t.Errorf("argocd's data = %v, want x only", data)
	}
	if len(skipped) != 1 || !strings.Contains(skipped[0].Error(), "b") {
		t.Errorf("skipped = %v", skipped)
	}

	_, _, err = extractAll(t, diff.ExtractOptions{Selector: diff.Selector{Manager: "ghost"}}, cmA, cmB)
	if err == nil || !strings.Contains(err.Error(), `none of the 2 objects has a managedFields entry of manager "ghost"`) {
		t.Errorf("no object with the manager: err = %v", err)
	}
	_, _, err = extractAll(t, diff.ExtractOptions{Selector: diff.Selector{Manager: "ghost"}}, cmA)
	if err == nil {
		t.Error("one object without the manager: no error")
	}
}

func TestExtractObjectsAllLeavesOutIdentityOnly(t *testing.T) {
	out, _, err := extractAll(t, diff.ExtractOptions{All: true}, cmA, cmB)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, x := range out {
		got = append(got, x.Object.GetName()+":"+x.Owner.Manager)
	}
	if strings.Join(got, ",") != "a:argocd,b:editor" {
		t.Errorf("extracted %v (nobody owns nothing but the identity)", got)
	}
}

func TestExtractObjectsRedactsSecrets(t *testing.T) {
	for _, show := range []bool{false, true} {
		out, _, err := extractAll(t, diff.ExtractOptions{All: true, ShowSecretValues: show}, secret)
		if err != nil {
			t.Fatal(err)
		}
		v, _, _ := unstructured.NestedString(out[0].Doc.Object, "data", "password")
		if (v == "UzNDUjNU") != show {
			t.Errorf("show %v: password = %q", show, v)
		}
	}
}

// --all-managers on an object without managedFields prints nothing: an
// error for one object, a skip (said) among several, an error when none
// has any.
func TestExtractObjectsAllWithoutManagedFields(t *testing.T) {
	const bare = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bare, namespace: shop}\ndata: {x: '1'}\n"
	const identity = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: id\n  namespace: shop\n  managedFields:\n  - {manager: nobody, operation: Update, apiVersion: v1, fieldsType: FieldsV1, fieldsV1: {}}\n"
	_, _, err := extractAll(t, diff.ExtractOptions{All: true}, bare)
	if err == nil || err.Error() != "ConfigMap/shop/bare has no managedFields (never recorded, or wiped): nothing to extract; kubectl get -o yaml shows the object itself, and an apply of its manifest records an owner again" {
		t.Errorf("one object without managedFields: %v", err)
	}
	_, _, err = extractAll(t, diff.ExtractOptions{All: true}, identity)
	if err == nil || !strings.Contains(err.Error(), "ConfigMap/shop/id: no managedFields entry owns a field") {
		t.Errorf("one object whose entries own nothing: %v", err)
	}
	out, skipped, err := extractAll(t, diff.ExtractOptions{All: true}, cmB, bare)
	if err != nil || len(out) != 1 || len(skipped) != 1 || !strings.Contains(skipped[0].Error(), "ConfigMap/shop/bare has no managedFields") {
		t.Errorf("among several: %d extracted, skipped %v, err %v", len(out), skipped, err)
	}
	_, _, err = extractAll(t, diff.ExtractOptions{All: true}, bare, identity)
	if err == nil || !strings.Contains(err.Error(), "none of the 2 objects has a managedFields entry that owns a field") {
		t.Errorf("none has any: %v", err)
	}
}
