package kube

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/cli-runtime/pkg/resource"
)

func TestSelectionValidate(t *testing.T) {
	tests := []struct {
		name    string
		sel     Selection
		args    []string
		wantErr string // "" when valid
	}{
		{name: "type and name", args: []string{"deploy", "web"}},
		{name: "type/name", args: []string{"deploy/web"}},
		{name: "type with selector", sel: Selection{LabelSelector: "app=web"}, args: []string{"deploy"}},
		{name: "file", sel: Selection{Files: resource.FilenameOptions{Filenames: []string{"x.yaml"}}}},
		{name: "kustomization", sel: Selection{Files: resource.FilenameOptions{Kustomize: "overlay"}}},
		{name: "all kinds", sel: Selection{AllKinds: true, allowAllKinds: true}},
		{name: "nothing", wantErr: "name the objects"},
		{name: "-f and -k", sel: Selection{Files: resource.FilenameOptions{Filenames: []string{"x"}, Kustomize: "k"}}, wantErr: "only one of -f and -k"},
		{name: "names and -f", sel: Selection{Files: resource.FilenameOptions{Filenames: []string{"x"}}}, args: []string{"deploy/web"}, wantErr: "not both"},
		{name: "names and selector, as kubectl refuses", sel: Selection{LabelSelector: "app=web"}, args: []string{"deploy", "web"}, wantErr: "name cannot be provided when a selector is specified"},
		{name: "type/name and selector", sel: Selection{LabelSelector: "app=web"}, args: []string{"deploy/web"}, wantErr: "selector"},
		{name: "names across namespaces", sel: Selection{AllNamespaces: true}, args: []string{"deploy/web"}, wantErr: "across all namespaces"},
		{name: "all kinds and a type", sel: Selection{AllKinds: true}, args: []string{"deploy"}, wantErr: "--all-kinds selects every kind"},
		{name: "local without files", sel: Selection{Local: true}, wantErr: "--local needs"},
		{name: "local with names", sel: Selection{Local: true, Files: resource.FilenameOptions{Filenames: []string{"x"}}}, args: []string{"deploy/web"}, wantErr: "--local reads -f/-k only"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.sel.Validate(tt.args)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestReadManifests(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n")
	ms, err := ReadManifests(context.Background(), nil, &resource.FilenameOptions{Filenames: []string{good}})
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 2 || ms[0].Object.GetName() != "a" || ms[1].Object.GetName() != "b" || ms[0].Source != good {
		t.Fatalf("got %d manifests: %+v", len(ms), ms)
	}
	for name, body := range map[string]string{
		"nokind.yaml": "metadata:\n  name: a\n",
		"broken.yaml": "apiVersion: v1\nkind: [\n",
		"empty.yaml":  "",
	} {
		if _, err := ReadManifests(context.Background(), nil, &resource.FilenameOptions{Filenames: []string{write(name, body)}}); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// -f - reads the reader given for standard input, and stops waiting for
// it when the context is done (Ctrl-C while nothing comes).
func TestReadManifestsFromStandardInput(t *testing.T) {
	in := strings.NewReader("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: piped\n")
	ms, err := ReadManifests(context.Background(), in, &resource.FilenameOptions{Filenames: []string{"-"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 1 || ms[0].Object.GetName() != "piped" {
		t.Fatalf("got %+v", ms)
	}

	r, w := io.Pipe() // a standard input nothing is written to
	defer func() { _ = w.Close() }()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := ReadManifests(ctx, r, &resource.FilenameOptions{Filenames: []string{"-"}})
		done <- err
	}()
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "reading standard input") {
			t.Errorf("got %v, want a cancelled read of standard input", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ReadManifests still waits for standard input after its context was cancelled")
	}
}
