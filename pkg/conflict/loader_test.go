package conflict

import (
	"context"
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/openapi"
)

// doc is an OpenAPI v3 document of example.com/v1 declaring kinds.
func doc(kinds ...string) []byte {
	out := `{"openapi":"3.0.0","info":{"title":"t","version":"v1"},"paths":{},"components":{"schemas":{`
	for i, k := range kinds {
		if i > 0 {
			out += ","
		}
		out += fmt.Sprintf(`"com.example.v1.%s":{"type":"object","properties":{"apiVersion":{"type":"string"},"kind":{"type":"string"},"spec":{"type":"object","properties":{"size":{"type":"string"}}}},"x-kubernetes-group-version-kind":[{"group":"example.com","version":"v1","kind":%q}]}`, k, k)
	}
	return []byte(out + "}}}")
}

type fakeGV struct{ body []byte }

func (f fakeGV) Schema(string) ([]byte, error) { return f.body, nil }
func (fakeGV) ServerRelativeURL() string       { return "/openapi/v3/apis/example.com/v1?hash=OLD" }

type fakeIndex map[string]openapi.GroupVersion

func (f fakeIndex) Paths() (map[string]openapi.GroupVersion, error) { return f, nil }

// A CRD just added to a group-version: the index still names the old
// document (the aggregator reads it again a second later), whose content
// a cache keeps; Refresh reads the current one.
func TestLoaderRefreshStaleIndex(t *testing.T) {
	gv := schema.GroupVersion{Group: "example.com", Version: "v1"}
	gizmo := gv.WithKind("Gizmo")
	fetched := 0
	l := &Loader{
		Client: fakeIndex{"apis/example.com/v1": fakeGV{doc("Dial")}},
		Fetch: func(_ context.Context, path string) ([]byte, error) {
			fetched++
			if path != "apis/example.com/v1" {
				t.Errorf("fetched %q", path)
			}
			return doc("Dial", "Gizmo"), nil
		},
	}
	s, err := l.Load(context.Background(), []schema.GroupVersion{gv})
	if err != nil || s.Has(gizmo) || !s.Has(gv.WithKind("Dial")) {
		t.Fatalf("before: has Gizmo %v, err %v", s.Has(gizmo), err)
	}
	ok, err := l.Refresh(context.Background(), gv)
	if !ok || err != nil {
		t.Fatalf("Refresh: %v %v", ok, err)
	}
	s, err = l.Load(context.Background(), []schema.GroupVersion{gv})
	if err != nil || !s.Has(gizmo) {
		t.Fatalf("after: has Gizmo %v, err %v", s.Has(gizmo), err)
	}
	if fetched != 1 {
		t.Errorf("fetched %d times", fetched)
	}
	// A group-version the index does not hold is not fetched.
	if ok, err := l.Refresh(context.Background(), schema.GroupVersion{Group: "other.com", Version: "v1"}); ok || err != nil || fetched != 1 {
		t.Errorf("unpublished group-version: %v %v, fetched %d", ok, err, fetched)
	}
}

// ClusterSource.Schema reads the current document once when the index's
// lacks the applied kind, instead of typing the object by deduction.
func TestClusterSourceSchemaRefreshes(t *testing.T) {
	l := &Loader{
		Client: fakeIndex{"apis/example.com/v1": fakeGV{doc("Dial")}},
		Fetch:  func(context.Context, string) ([]byte, error) { return doc("Dial", "Gizmo"), nil },
	}
	s := &ClusterSource{Loader: l}
	obj := &unstructured.Unstructured{Object: map[string]interface{}{
		"apiVersion": "example.com/v1", "kind": "Gizmo",
		"metadata": map[string]interface{}{"name": "g"}, "spec": map[string]interface{}{"size": "l"},
	}}
	tc, reason, err := s.Schema(context.Background(), obj, nil)
	if err != nil || tc == nil || reason != "" {
		t.Fatalf("schema %v, reason %q, err %v", tc, reason, err)
	}
	l.Fetch = func(context.Context, string) ([]byte, error) { return doc("Dial"), nil }
	l.parts, l.built, l.paths = nil, nil, nil
	if tc, reason, _ := s.Schema(context.Background(), obj, nil); tc != nil || reason != "the cluster does not publish one" {
		t.Errorf("a kind the server does not publish: %v %q", tc, reason)
	}
}
