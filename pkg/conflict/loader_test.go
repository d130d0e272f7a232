package conflict

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/openapi"

	"github.com/kubectl-ssa/kubectl-ssa/internal/testkit"
)

// A CRD just added to a group-version: the index still names the old
// document (the aggregator reads it again a second later), whose content
// a cache keeps; Refresh reads the current one.
func TestLoaderRefreshStaleIndex(t *testing.T) {
	gv := schema.GroupVersion{Group: "example.com", Version: "v1"}
	gizmo := gv.WithKind("Gizmo")
	fetched := 0
	l := &Loader{
		Client: testkit.OpenAPIIndex{"apis/example.com/v1": testkit.OpenAPIDoc{Body: testkit.OpenAPIDocument("Dial")}},
		Fetch: func(_ context.Context, path string) ([]byte, error) {
			fetched++
			if path != "apis/example.com/v1" {
				t.Errorf("fetched %q", path)
			}
			return testkit.OpenAPIDocument("Dial", "Gizmo"), nil
		},
	}
	s, err := l.Load(context.Background(), []schema.GroupVersion{gv})
	if err != nil || s.Has(gizmo) || !s.Has(gv.WithKind("Dial")) {
		t.Fatalf("before: has Gizmo %v, err %v", s.Has(gizmo), err)
	}
	ok, err := l.Refresh(context.Background(), gv, false)
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
	if ok, err := l.Refresh(context.Background(), schema.GroupVersion{Group: "other.com", Version: "v1"}, false); ok || err != nil || fetched != 1 {
		t.Errorf("unpublished group-version: %v %v, fetched %d", ok, err, fetched)
	}
}

// countingIndex is an index that counts its reads, and may fail.
type countingIndex struct {
	testkit.OpenAPIIndex
	reads atomic.Int32
	err   error
}

func (c *countingIndex) Paths() (map[string]openapi.GroupVersion, error) {
	c.reads.Add(1)
	if c.err != nil {
		return nil, c.err
	}
	return c.OpenAPIIndex.Paths()
}

// Prefetch reads the index once, for the Load after it; its error is
// Load's, as when Load reads the index itself.
func TestLoaderPrefetch(t *testing.T) {
	gv := schema.GroupVersion{Group: "example.com", Version: "v1"}
	idx := &countingIndex{OpenAPIIndex: testkit.OpenAPIIndex{"apis/example.com/v1": testkit.OpenAPIDoc{Body: testkit.OpenAPIDocument("Dial")}}}
	l := &Loader{Client: idx}
	l.Prefetch()
	l.Prefetch()
	for range 2 {
		s, err := l.Load(context.Background(), []schema.GroupVersion{gv})
		if err != nil || !s.Has(gv.WithKind("Dial")) {
			t.Fatalf("Load: %v", err)
		}
	}
	if n := idx.reads.Load(); n != 1 {
		t.Errorf("the index was read %d times, want 1", n)
	}

	failing := &countingIndex{err: errors.New("forbidden")}
	l = &Loader{Client: failing}
	l.Prefetch()
	_, err := l.Load(context.Background(), []schema.GroupVersion{gv})
	want := "reading the cluster's OpenAPI v3 index (/openapi/v3): forbidden"
	if err == nil || err.Error() != want {
		t.Errorf("error %v, want %q", err, want)
	}
}

// countingDoc is a document that counts its reads.
type countingDoc struct {
	testkit.OpenAPIDoc
	reads *atomic.Int32
}

func (d countingDoc) Schema(contentType string) ([]byte, error) {
	d.reads.Add(1)
	return d.OpenAPIDoc.Schema(contentType)
}

// PrefetchDocuments loads a group-version's document once, for the Load
// that asks for it; a group-version the index does not name is left out,
// as Load leaves it out; a document that fails is Load's error.
func TestLoaderPrefetchDocuments(t *testing.T) {
	gv := schema.GroupVersion{Group: "example.com", Version: "v1"}
	unpublished := schema.GroupVersion{Group: "other.com", Version: "v1"}
	var reads atomic.Int32
	idx := &countingIndex{OpenAPIIndex: testkit.OpenAPIIndex{"apis/example.com/v1": countingDoc{testkit.OpenAPIDoc{Body: testkit.OpenAPIDocument("Dial")}, &reads}}}
	l := &Loader{Client: idx}
	l.PrefetchDocuments(context.Background(), gv, unpublished, gv)
	l.PrefetchDocuments(context.Background(), gv)
	for range 2 {
		s, err := l.Load(context.Background(), []schema.GroupVersion{gv, unpublished})
		if err != nil || !s.Has(gv.WithKind("Dial")) {
			t.Fatalf("Load: %v", err)
		}
	}
	if n, m := idx.reads.Load(), reads.Load(); n != 1 || m != 1 {
		t.Errorf("the index was read %d times and the document %d, want 1 and 1", n, m)
	}
	l = &Loader{Client: testkit.OpenAPIIndex{"apis/example.com/v1": testkit.OpenAPIDoc{Body: []byte(`{"components": 1}`)}}}
	l.PrefetchDocuments(context.Background(), gv)
	if _, err := l.Load(context.Background(), []schema.GroupVersion{gv}); err == nil {
		t.Error("a document that does not parse loaded")
	}
}
