package defaults_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/defaults"
)

func TestKept(t *testing.T) {
	svc := schema.GroupVersionKind{Version: "v1", Kind: "Service"}
	live := `{"spec":{"type":"NodePort","clusterIP":"10.96.0.10","clusterIPs":["10.96.0.10"],"ipFamilies":["IPv4"],"ipFamilyPolicy":"SingleStack",
		"ports":[{"name":"http","port":80,"protocol":"TCP","nodePort":30080},{"name":"admin","port":81,"protocol":"TCP","nodePort":30081}]}}`
	daemonSet := `{"metadata":{"annotations":{"deprecated.daemonset.template.generation":"3"}},"spec":{"template":{"spec":{"containers":[{"name":"c","image":"nginx"}]}}}}`
	portKey := func(port int, protocol string) fieldpath.PathElement {
		p := fieldpath.MakePathOrDie("spec", "ports", fieldpath.KeyByFields("port", port, "protocol", protocol))
		return p[2]
	}
	type answer struct {
		Value       any
		Kept, Known bool
	}
	tests := []struct {
		name   string
		gvk    schema.GroupVersionKind
		result string
		path   fieldpath.Path
		want   answer
	}{
		{"cluster IP", svc, `{"spec":{"type":"NodePort"}}`, path("spec", "clusterIP"), answer{"10.96.0.10", true, true}},
		{"cluster IPs", svc, `{"spec":{}}`, path("spec", "clusterIPs"), answer{[]any{"10.96.0.10"}, true, true}},
		{"not for ExternalName", svc, `{"spec":{"type":"ExternalName"}}`, path("spec", "clusterIP"), answer{nil, false, true}},
		{"policy", svc, `{"spec":{}}`, path("spec", "ipFamilyPolicy"), answer{"SingleStack", true, true}},
		{"families of the cluster IPs", svc, `{"spec":{}}`, path("spec", "ipFamilies"), answer{[]any{"IPv4"}, true, true}},
		{"families of a headless service", svc, `{"spec":{"clusterIPs":["None"]}}`, path("spec", "ipFamilies"), answer{nil, true, false}},
		{"node port by the port's name", svc, `{"spec":{"type":"NodePort","ports":[{"name":"http","port":80,"protocol":"TCP"}]}}`,
			path("spec", "ports", portKey(80, "TCP"), "nodePort"), answer{int64(30080), true, true}},
		{"no node port for a ClusterIP service", svc, `{"spec":{"ports":[{"name":"http","port":80,"protocol":"TCP"}]}}`,
			path("spec", "ports", portKey(80, "TCP"), "nodePort"), answer{nil, false, true}},
		{"not a node port another port keeps", svc, `{"spec":{"type":"NodePort","ports":[{"name":"http","port":80,"protocol":"TCP"},{"name":"other","port":82,"protocol":"TCP","nodePort":30080}]}}`,
			path("spec", "ports", portKey(80, "TCP"), "nodePort"), answer{nil, false, true}},
		{"a DaemonSet's template generation", schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "DaemonSet"},
			`{"metadata":{"annotations":{}},"spec":{"template":{"spec":{"containers":[{"name":"c","image":"nginx"}]}}}}`,
			path("metadata", "annotations", "deprecated.daemonset.template.generation"), answer{"3", true, true}},
		{"bumped when the template changes", schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "DaemonSet"},
			`{"spec":{"template":{"spec":{"containers":[{"name":"c","image":"nginx:2"}]}}}}`,
			path("metadata", "annotations", "deprecated.daemonset.template.generation"), answer{nil, true, false}},
		{"other kinds keep nothing", schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, `{"spec":{}}`, path("spec", "clusterIP"), answer{nil, false, true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := live
			if tt.gvk.Kind == "DaemonSet" {
				l = daemonSet
			}
			v, kept, known := defaults.Kept(tt.gvk, tt.path, obj(t, l), obj(t, tt.result))
			if diff := cmp.Diff(tt.want, answer{v, kept, known}); diff != "" {
				t.Errorf("Kept(%s) (-want +got):\n%s", tt.path, diff)
			}
		})
	}
}
