package conflict

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/pathlang"
)

// The fields that depend on the apiserver's configuration: what an
// object asks for and does not hold already.
func TestServerSettingUses(t *testing.T) {
	const heldService = `{"apiVersion":"v1","kind":"Service","metadata":{"name":"s"},"spec":{"type":"NodePort","clusterIP":"10.96.0.9","clusterIPs":["10.96.0.9"],
"ports":[{"port":80,"protocol":"TCP","nodePort":30080}]}}`
	tests := []struct {
		name         string
		result, live string
		want         []string
	}{
		{"a Pod's privileged and hostProcess containers", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{
"securityContext":{"windowsOptions":{"hostProcess":true}},
"initContainers":[{"name":"init","securityContext":{"privileged":true}}],
"containers":[{"name":"a","securityContext":{"privileged":false}},{"name":"b","securityContext":{"windowsOptions":{"hostProcess":true}}}]}}`, "",
			[]string{".spec.securityContext.windowsOptions.hostProcess", `.spec.initContainers[name="init"].securityContext.privileged`, `.spec.containers[name="b"].securityContext.windowsOptions.hostProcess`}},
		{"a CronJob's template", `{"apiVersion":"batch/v1","kind":"CronJob","metadata":{"name":"c"},"spec":{"jobTemplate":{"spec":{"template":{"spec":{"containers":[{"name":"c","securityContext":{"privileged":true}}]}}}}}}`, "",
			[]string{`.spec.jobTemplate.spec.template.spec.containers[name="c"].securityContext.privileged`}},
		{"a ConfigMap", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"privileged":"true"}}`, "", nil},
		{"a Service asking for a node port and an IP", `{"apiVersion":"v1","kind":"Service","metadata":{"name":"s"},"spec":{"type":"LoadBalancer","clusterIP":"10.96.0.9",
"externalTrafficPolicy":"Local","healthCheckNodePort":31000,"ports":[{"port":80,"nodePort":30080},{"port":81}]}}`, "",
			[]string{`.spec.ports[port=80,protocol="TCP"].nodePort`, ".spec.healthCheckNodePort", ".spec.clusterIP"}},
		{"a Service keeping what it holds", heldService, heldService, nil},
		{"headless", `{"apiVersion":"v1","kind":"Service","metadata":{"name":"s"},"spec":{"clusterIP":"None","clusterIPs":["None"]}}`, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			result := yamlObject(t, tt.result)
			var live *unstructured.Unstructured
			if tt.live != "" {
				live = yamlObject(t, tt.live)
			}
			var got []string
			for _, s := range serverSettings {
				for _, p := range s.uses(result, live) {
					got = append(got, pathlang.Path(p).String())
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}
