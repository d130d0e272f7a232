package conflict

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The apiserver refuses two ports of one name; the field manager merges a
// port whose number was edited with the declared one (argo-cd#25474).
func TestDuplicatePortNames(t *testing.T) {
	port := func(n int64, name string) any {
		return map[string]any{"containerPort": n, "name": name, "protocol": "TCP"}
	}
	tests := []struct {
		name string
		obj  map[string]any
		want []string
	}{
		{
			name: "a Deployment's container",
			obj: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "spec": map[string]any{"template": map[string]any{"spec": map[string]any{
				"containers": []any{
					map[string]any{"name": "a", "ports": []any{port(80, "http"), port(8080, "http")}},
					map[string]any{"name": "b", "ports": []any{port(80, "http"), port(81, "admin"), port(82, "")}},
				},
			}}}},
			want: []string{`two ports named "http" in .spec.template.spec.containers[name="a"].ports: the apiserver's validation refuses duplicate port names, which is not modelled here`},
		},
		{
			name: "a Service",
			obj: map[string]any{"apiVersion": "v1", "kind": "Service", "spec": map[string]any{
				"ports": []any{map[string]any{"name": "http", "port": int64(80)}, map[string]any{"name": "http", "port": int64(8080)}},
			}},
			want: []string{`two ports named "http" in .spec.ports: the apiserver's validation refuses duplicate port names, which is not modelled here`},
		},
		{
			name: "a ConfigMap's data is no ports list",
			obj:  map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "data": map[string]any{"ports": "http"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, duplicatePortNames(&unstructured.Unstructured{Object: tt.obj})); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
