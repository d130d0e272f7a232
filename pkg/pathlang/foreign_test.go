package pathlang_test

import (
	"testing"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/pathlang"
)

func index(i int) fieldpath.PathElement { return fieldpath.PathElement{Index: &i} }

// pod has the list shapes a path crosses: keyed items (one and two key
// fields), a set, a list of lists, names jq and pointers must quote.
var pod = map[string]any{
	"a-b":      "x",
	"metadata": map[string]any{"labels": map[string]any{"app.kubernetes.io/name": "web", "a~b": "x"}},
	"spec": map[string]any{
		"replicas": int64(2),
		"containers": []any{
			map[string]any{"name": "sidecar"},
			map[string]any{"name": "web", "image": "nginx", "ports": []any{
				map[string]any{"containerPort": int64(80), "protocol": "UDP"},
				map[string]any{"containerPort": int64(80), "protocol": "TCP", "name": "http"},
			}},
		},
		"finalizers": []any{"a", "b/c"},
		"matrix":     []any{[]any{"x"}, []any{"y", "z"}},
	},
}

func TestJQAndJSONPointer(t *testing.T) {
	tests := []struct {
		name    string
		path    fieldpath.Path
		jq      string
		pointer string // "" when the object has no such item
	}{
		{"field", path(field("spec"), field("replicas")), ".spec.replicas", "/spec/replicas"},
		{"quoted name after a term", path(field("metadata"), field("labels"), field("app.kubernetes.io/name")),
			`.metadata.labels["app.kubernetes.io/name"]`, "/metadata/labels/app.kubernetes.io~1name"},
		{"quoted name first", path(field("a-b")), `.["a-b"]`, "/a-b"},
		{"tilde", path(field("metadata"), field("labels"), field("a~b")), `.metadata.labels["a~b"]`, "/metadata/labels/a~0b"},
		{"keyed item", path(field("spec"), field("containers"), key("name", "web"), field("image")),
			`.spec.containers[] | select(.name == "web") | .image`, "/spec/containers/1/image"},
		{"two keys under a keyed item", path(field("spec"), field("containers"), key("name", "web"), field("ports"), key("containerPort", int64(80), "protocol", "TCP"), field("name")),
			`.spec.containers[] | select(.name == "web") | .ports[] | select(.containerPort == 80 and .protocol == "TCP") | .name`,
			"/spec/containers/1/ports/1/name"},
		{"set item", path(field("spec"), field("finalizers"), val("b/c")), `.spec.finalizers[] | select(. == "b/c")`, "/spec/finalizers/1"},
		{"index, then an index", path(field("spec"), field("matrix"), index(1), index(0)), ".spec.matrix[1][0]", "/spec/matrix/1/0"},
		{"an item of an item", path(field("spec"), field("matrix"), val([]any{"x"}), index(0)), `.spec.matrix[] | select(. == ["x"]) | .[0]`, "/spec/matrix/0/0"},
		{"missing item", path(field("spec"), field("containers"), key("name", "db"), field("image")), `.spec.containers[] | select(.name == "db") | .image`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := pathlang.JQ(tt.path); got != tt.jq {
				t.Errorf("JQ: %s\nwant %s", got, tt.jq)
			}
			got, ok := pathlang.JSONPointer(pod, tt.path)
			if ok != (tt.pointer != "") || got != tt.pointer {
				t.Errorf("JSONPointer: %q %v, want %q", got, ok, tt.pointer)
			}
		})
	}
}
