package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-ssa/kubectl-ssa/internal/testkit"
)

var crdOnce sync.Once

// waitPublished waits until the OpenAPI v3 document of each version crd
// serves holds its kind.
func waitPublished(t *testing.T, crd *unstructured.Unstructured, deadline time.Time) {
	t.Helper()
	group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
	kind, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "kind")
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	for _, v := range versions {
		vm, _ := v.(map[string]any)
		name, _ := vm["name"].(string)
		if served, _ := vm["served"].(bool); !served {
			continue
		}
		for {
			// As clients read it: through the index, whose hashed URL
			// is what a schema cache is keyed by.
			body, err := openAPIDocument("apis/" + group + "/" + name)
			if err == nil && declaresKind(body, group, name, kind) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the OpenAPI document of %s/%s does not hold %s", group, name, kind)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}

// declaresKind tells whether an OpenAPI v3 document has the schema of a
// kind: a component whose x-kubernetes-group-version-kind names it, which
// is what a schema converter looks for (the kind's name alone also shows
// in the paths and in other components' lists).
func declaresKind(doc []byte, group, version, kind string) bool {
	var d struct {
		Components struct {
			Schemas map[string]struct {
				GVK        []struct{ Group, Version, Kind string } `json:"x-kubernetes-group-version-kind"`
				Properties map[string]json.RawMessage              `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if json.Unmarshal(doc, &d) != nil {
		return false
	}
	for _, sc := range d.Components.Schemas {
		for _, g := range sc.GVK {
			if g.Group == group && g.Version == version && g.Kind == kind {
				return true
			}
		}
	}
	return false
}

// openAPIDocument reads the OpenAPI v3 document of path ("apis/G/V") at
// the URL the index names.
func openAPIDocument(path string) ([]byte, error) {
	rc := env.client.Discovery().RESTClient()
	raw, err := rc.Get().AbsPath("/openapi/v3").Do(context.Background()).Raw()
	if err != nil {
		return nil, err
	}
	var index struct {
		Paths map[string]struct {
			URL string `json:"serverRelativeURL"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(raw, &index); err != nil {
		return nil, err
	}
	p, ok := index.Paths[path]
	if !ok {
		return nil, fmt.Errorf("the index has no %s", path)
	}
	u, err := url.Parse(p.URL)
	if err != nil {
		return nil, err
	}
	req := rc.Get().AbsPath(u.Path)
	for k, vs := range u.Query() {
		for _, v := range vs {
			req = req.Param(k, v)
		}
	}
	return req.Do(context.Background()).Raw()
}

func waitEstablished(t *testing.T, name string) {
	t.Helper()
	gvr := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		u, err := env.dynamic.Resource(gvr).Get(context.Background(), name, metav1.GetOptions{})
		if err == nil {
			conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
			for _, c := range conds {
				m, _ := c.(map[string]any)
				if m["type"] == "Established" && m["status"] == "True" {
					restMapper().Reset()
					// Discovery takes a moment to serve the new type,
					// and the OpenAPI documents to publish its schema
					// (before, a prediction types it by deduction).
					time.Sleep(500 * time.Millisecond)
					waitPublished(t, u, deadline)
					return
				}
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("CRD %s not established", name)
}

var extraCRDs sync.Once

func createExtraCRDs(t *testing.T) {
	t.Helper()
	extraCRDs.Do(func() {
		apply(t, "", "test-setup", testkit.Fixture(t, "crd/gadgets.yaml"), true)
		apply(t, "", "test-setup", testkit.Fixture(t, "crd/blobs.yaml"), true)
		waitEstablished(t, "gadgets.example.com")
		waitEstablished(t, "blobs.example.com")
	})
}
