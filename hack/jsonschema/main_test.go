package main

import (
	"bytes"
	"os"
	"path/filepath"
	"sort"
	"testing"
)

// TestSchemasAreUpToDate fails when a report's Go type changed and
// docs/schema was not written again (make schemas).
func TestSchemasAreUpToDate(t *testing.T) {
	files, err := schemas()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join("..", "..", "docs", "schema")
	var names []string
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || !bytes.Equal(got, files[name]) {
			t.Errorf("docs/schema/%s is not what the report type gives: run make schemas", name)
		}
	}
	onDisk, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(onDisk) != len(files) {
		t.Errorf("docs/schema holds %d files, the reports are %d", len(onDisk), len(files))
	}
}
