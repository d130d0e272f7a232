package conflict_test

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/conflict"
)

func configMap(data map[string]any, field string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "c", "namespace": "shop"},
		field:      data,
	}}
}

// TestApplyBody: the prediction reads an apply body as the apiserver does
// (YAML, under its size limit), so what the server refuses or rewrites
// is predicted as such.
func TestApplyBody(t *testing.T) {
	tests := []struct {
		name      string
		value     string
		want      string
		rewritten bool
		err       string
	}{
		{name: "plain", value: "a\tb\nc \u00e9 \u2028", want: "a\tb\nc \u00e9 \u2028"},
		{name: "DEL is refused", value: "a\x7fb", err: "ConfigMap/shop/c: the apiserver refuses the apply: error decoding patch"},
		{name: "a control character JSON escapes is read", value: "a\x01b", want: "a\x01b"},
		{name: "NEL becomes a space", value: "a\u0085b", want: "a b", rewritten: true},
		{name: "over the request limit", value: strings.Repeat("x", conflict.MaxRequestBodyBytes), err: "over the 3145728 a request may carry (413 Request Entity Too Large)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj, rewritten, err := conflict.ApplyBody(configMap(map[string]any{"k": tt.value}, "data"))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got, _, _ := unstructured.NestedString(obj.Object, "data", "k"); got != tt.want || rewritten != tt.rewritten {
				t.Errorf("value %q rewritten %v, want %q %v", got, rewritten, tt.want, tt.rewritten)
			}
		})
	}
}

// TestExplainSizeLimits: an apply the apiserver refuses for its size is
// an error of the prediction, not a success.
func TestExplainSizeLimits(t *testing.T) {
	big := func(n int) string { return strings.Repeat("x", n) }
	tests := []struct {
		name string
		obj  *unstructured.Unstructured
		err  string
	}{
		{name: "a 2 MiB ConfigMap", obj: configMap(map[string]any{"a": big(2 << 20)}, "data"), err: "its values hold 2097152 bytes, over the 1048576 a ConfigMap may hold"},
		{name: "a ConfigMap just over 1 MiB, in two keys", obj: configMap(map[string]any{"a": big(1 << 19), "b": big(1<<19 + 1)}, "data"), err: "over the 1048576 a ConfigMap may hold"},
		{name: "a ConfigMap of 1 MiB", obj: configMap(map[string]any{"a": big(1 << 20)}, "data")},
		{name: "binaryData not base64", obj: configMap(map[string]any{"a": "YWJj", "b": "s3cret!!"}, "binaryData"), err: ".binaryData.b is not base64 (illegal base64 data at input byte 6): encode the value (base64 -w0), or set it as text under data"},
		{name: "binaryData base64", obj: configMap(map[string]any{"a": "YWJj"}, "binaryData")},
		{name: "a Secret's data not base64", obj: &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "s", "namespace": "shop"}, "data": map[string]any{"z": "s3cret!!", "a": "YWJj"}}},
			err: "Secret/shop/s: the apiserver refuses the apply: failed to convert new object to proper version: .data.z is not base64"},
		{name: "a 2 MiB custom resource", obj: &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "example.com/v1", "kind": "Blob", "metadata": map[string]any{"name": "c", "namespace": "shop"}, "spec": map[string]any{"a": big(2 << 20)}}},
			err: "over the 1572864 etcd stores in one request"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src, err := conflict.NewOfflineSource(nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			_, err = conflict.Explain(context.Background(), src, tt.obj, conflict.Options{FieldManager: "ci"})
			if tt.err == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Fatalf("err %v, want %q", err, tt.err)
			}
			if strings.Contains(err.Error(), "s3cret") {
				t.Fatalf("err %v holds the value", err)
			}
		})
	}
}
