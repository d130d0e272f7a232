package kube

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/cli-runtime/pkg/resource"

	"github.com/kubectl-ssa/kubectl-ssa/internal/testkit"
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

// TestInputURL: a URL given as an input is fetched up to MaxInputBytes,
// checked while its body streams, and within the run's timeout.
func TestInputURL(t *testing.T) {
	srv := testkit.InputServer(t, map[string]string{"/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"})
	tests := []struct {
		path, timeout, want string
	}{
		// The bound, not the timeout, ends an endless body: a minute
		// for 64 MiB even on a busy machine with the race detector.
		{"/endless.yaml", "1m", "endless.yaml holds more than 67108864 bytes"},
		{"/slow.yaml", "1s", "slow.yaml did not answer in full within 1s: try again, raise --request-timeout"},
		{"/missing.yaml", "1m", "status code=404"},
		{"/cm.yaml", "1m", ""},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			ctx := WithInputs(context.Background(), tt.timeout)
			ms, err := ReadManifests(ctx, nil, &resource.FilenameOptions{Filenames: []string{srv.URL + tt.path}})
			if tt.want == "" {
				if err != nil || len(ms) != 1 || ms[0].Source != srv.URL+tt.path {
					t.Fatalf("%v, err %v", ms, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err %v, want %q", err, tt.want)
			}
		})
	}
	if d := fetchTimeout("0"); d != DefaultFetchTimeout {
		t.Errorf("--request-timeout 0: %s", d)
	}
	if d := fetchTimeout("5"); d != 5*time.Second {
		t.Errorf("--request-timeout 5: %s", d)
	}
}

// TestInputDirectory: in a directory, a symlink is followed when sizing,
// what is not a regular file is refused, and all inputs of a run share
// MaxTotalInputBytes.
func TestInputDirectory(t *testing.T) {
	big := filepath.Join(t.TempDir(), "big")
	if err := os.WriteFile(big, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, MaxInputBytes+1); err != nil { // sparse
		t.Fatal(err)
	}
	linked := t.TempDir()
	if err := os.Symlink(big, filepath.Join(linked, "big.yaml")); err != nil {
		t.Fatal(err)
	}
	fifo := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(fifo, "p.yaml"), 0o600); err != nil {
		t.Fatal(err)
	}
	many := t.TempDir()
	for i := range 5 {
		f := filepath.Join(many, fmt.Sprintf("f%d.yaml", i))
		if err := os.WriteFile(f, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(f, MaxInputBytes-1); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name  string
		files []string
		want  string
	}{
		{"a symlink to a large file", []string{linked}, "big.yaml is 67108865 bytes"},
		{"a FIFO", []string{fifo}, "p.yaml is not a regular file (a FIFO)"},
		{"over the total", []string{many}, "f4.yaml brings what this run reads over 268435456 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ReadManifests(context.Background(), nil, &resource.FilenameOptions{Filenames: tt.files})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err %v, want %q", err, tt.want)
			}
		})
	}
	// The total is the run's: two reads in one run share it.
	ctx := WithInputs(context.Background(), "")
	if err := inputsOf(ctx).take("earlier", MaxTotalInputBytes-10); err != nil {
		t.Fatal(err)
	}
	small := filepath.Join(t.TempDir(), "cm.yaml")
	if err := os.WriteFile(small, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadManifests(ctx, nil, &resource.FilenameOptions{Filenames: []string{small}}); err == nil || !strings.Contains(err.Error(), "cm.yaml brings what this run reads over") {
		t.Fatalf("err %v", err)
	}
}

// TestInputKustomization: a kustomization naming remote resources, itself
// or through a local base, is refused.
func TestInputKustomization(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Join(dir, "base")
	if err := os.MkdirAll(base, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(base, "kustomization.yaml"), []byte("resources:\n- https://example.invalid/x.yaml\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte("resources:\n- base\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{dir, "https://github.com/org/repo//dir?ref=v1"} {
		_, err := ReadManifests(context.Background(), nil, &resource.FilenameOptions{Kustomize: k})
		if err == nil || !strings.Contains(err.Error(), "not read (no bound on its size or time)") {
			t.Errorf("-k %s: err %v", k, err)
		}
	}
}
