package kube

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/resource"
)

// TestInputCap: an input is read up to MaxInputBytes, whatever it is: a
// large regular file (alone or in a directory) is refused before it is
// read, an endless device or standard input when the bound is reached.
func TestInputCap(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(big, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, MaxInputBytes+1); err != nil { // sparse
		t.Fatal(err)
	}
	small := filepath.Join(t.TempDir(), "cm.yaml")
	if err := os.WriteFile(small, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		files []string
		stdin string
		want  string
	}{
		{name: "a large file", files: []string{big}, want: "big.yaml is 67108865 bytes, over the 67108864 read from one input: split it"},
		{name: "a large file in a directory", files: []string{dir}, want: "big.yaml is 67108865 bytes"},
		{name: "an endless device", files: []string{"/dev/zero"}, want: "/dev/zero holds more than 67108864 bytes"},
		{name: "a small file", files: []string{small}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ms, err := ReadManifests(context.Background(), strings.NewReader(tt.stdin), &resource.FilenameOptions{Filenames: tt.files})
			if tt.want == "" {
				if err != nil || len(ms) != 1 {
					t.Fatalf("%d objects, err %v", len(ms), err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err %v, want %q", err, tt.want)
			}
		})
	}
	zero, err := os.Open("/dev/zero")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = zero.Close() }()
	if _, err := ReadManifests(context.Background(), zero, &resource.FilenameOptions{Filenames: []string{"-"}}); err == nil || !strings.Contains(err.Error(), "standard input holds more than") {
		t.Errorf("endless standard input: %v", err)
	}
}

// TestLocalSelector: with --local, -l selects among the objects of the
// files as a server would.
func TestLocalSelector(t *testing.T) {
	f := filepath.Join(t.TempDir(), "cms.yaml")
	if err := os.WriteFile(f, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, labels: {app: web}}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b, labels: {app: db}}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := &Selection{Local: true, LabelSelector: "app=web", Files: resource.FilenameOptions{Filenames: []string{f}}}
	if err := s.Validate(nil); err != nil {
		t.Fatal(err)
	}
	objs, _, err := s.Resolve(context.Background(), nil, nil)
	if err != nil || len(objs) != 1 || objs[0].GetName() != "a" {
		t.Fatalf("%d objects, err %v", len(objs), err)
	}
}
