package conflict

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The apiserver refuses two ports of one name; the field manager merges a
// port whose number was edited with the declared one (argo-cd#25474).
func TestDuplicatePortNames(t *testing.T) {
	port := func(n int64, name string) interface{} {
		return map[string]interface{}{"containerPort": n, "name": name, "protocol": "TCP"}
	}
	obj := map[string]interface{}{"spec": map[string]interface{}{"template": map[string]interface{}{"spec": map[string]interface{}{
		"containers": []interface{}{
			map[string]interface{}{"name": "a", "ports": []interface{}{port(80, "http"), port(8080, "http")}},
			map[string]interface{}{"name": "b", "ports": []interface{}{port(80, "http"), port(81, "admin"), port(82, "")}},
		},
	}}}}
	want := []string{`two ports named "http" in .spec.template.spec.containers[0].ports: the apiserver's validation refuses duplicate port names, which is not modelled here`}
	if diff := cmp.Diff(want, duplicatePortNames(obj)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
