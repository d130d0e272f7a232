package cmd

import (
	"bytes"
	"compress/gzip"
	"testing"
)

// The file's gzip header holds no name and no time: the same snapshot
// gives the same bytes.
func TestSnapshotGzipIsDeterministic(t *testing.T) {
	var a, b bytes.Buffer
	doc := []byte(`{"apiVersion":"ssa.kubectl-ssa.io/v1alpha1","kind":"Snapshot"}`)
	if err := gzipTo(&a, doc); err != nil {
		t.Fatal(err)
	}
	if err := gzipTo(&b, doc); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("two writes of one snapshot differ")
	}
	r, err := gzip.NewReader(&a)
	if err != nil {
		t.Fatal(err)
	}
	if !r.ModTime.IsZero() || r.Name != "" || r.Comment != "" {
		t.Errorf("gzip header: time %v, name %q, comment %q", r.ModTime, r.Name, r.Comment)
	}
}
