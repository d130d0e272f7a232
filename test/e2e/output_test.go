package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// TestYAMLOfControlCharacters: an object holding C1 control characters,
// NEL and DEL (which the API stores; kubectl apply of YAML can't send
// them, kubectl create of JSON can) is written by every YAML output, and
// the YAML reads back as the object's values.
func TestYAMLOfControlCharacters(t *testing.T) {
	ns := namespace(t)
	odd := "a\u0085b\u0080c\u009fd\x7fe"
	cm := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "odd", "namespace": ns, "annotations": map[string]any{"note": odd}},
		"data":     map[string]any{"k": odd},
	}}
	if _, err := resourceFor(t, cm).Create(context.Background(), cm, metav1.CreateOptions{FieldManager: "creator"}); err != nil {
		t.Fatal(err)
	}
	readBack := func(t *testing.T, out string) {
		t.Helper()
		for _, doc := range strings.Split(out, "\n---\n") {
			var v map[string]any
			if err := yaml.Unmarshal([]byte(doc), &v); err != nil {
				t.Fatalf("the YAML does not read back: %v\n%s", err, out)
			}
			if data, _, _ := unstructured.NestedString(v, "data", "k"); data == odd {
				return
			}
			if data, _, _ := unstructured.NestedString(v, "content", "data", "k"); data == odd {
				return
			}
		}
		t.Errorf("the value does not read back as written:\n%s", out)
	}
	t.Run("extract", func(t *testing.T) {
		readBack(t, mustSSA(t, 0, "extract", "-n", ns, "cm/odd", "--manager", "creator").stdout)
	})
	t.Run("extract --all-managers of a namespace", func(t *testing.T) {
		readBack(t, mustSSA(t, 0, "extract", "-n", ns, "cm", "--all-managers").stdout)
	})
	t.Run("who-owns -o yaml", func(t *testing.T) {
		var v map[string]any
		if err := yaml.Unmarshal([]byte(mustSSA(t, 0, "who-owns", "-n", ns, "cm/odd", "-o", "yaml").stdout), &v); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("diff -o yaml and the external diff", func(t *testing.T) {
		dir := t.TempDir()
		file := filepath.Join(dir, "cm.yaml")
		if err := os.WriteFile(file, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: odd\ndata:\n  k: plain\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		r := mustSSA(t, 1, "diff", "-n", ns, "-f", file, "-o", "yaml", "--field-manager", "creator", "--force-conflicts")
		var v map[string]any
		if err := yaml.Unmarshal([]byte(r.stdout), &v); err != nil {
			t.Fatalf("diff -o yaml: %v", err)
		}
		show := filepath.Join(dir, "show.sh")
		if err := os.WriteFile(show, []byte("#!/bin/sh\ncat \"$1\"/*\nexit 1\n"), 0o700); err != nil {
			t.Fatal(err)
		}
		ext := ssaEnv(t, []string{"KUBECTL_EXTERNAL_DIFF=" + show}, "diff", "-n", ns, "-f", file, "--field-manager", "creator", "--force-conflicts")
		if ext.code != 1 {
			t.Fatalf("exit %d\n%s%s", ext.code, ext.stdout, ext.stderr)
		}
		readBack(t, ext.stdout)
	})
}
