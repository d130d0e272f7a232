package defaults_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/defaults"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/pathlang"
)

// TestAllocated: what the apiserver allocates to a Service is what the
// predicted object lacks, for every type, named as the field manager
// names it (a port by its key), on create and on a change that needs it.
func TestAllocated(t *testing.T) {
	tests := []struct {
		name string
		spec string
		want []string
	}{
		{"ClusterIP created", `{ports: [{port: 80}]}`,
			[]string{".spec.clusterIP", ".spec.clusterIPs", ".spec.ipFamilies", ".spec.ipFamilyPolicy"}},
		{"headless: its None is set, the families are the server's", `{clusterIP: None, clusterIPs: [None], ports: [{port: 80}]}`,
			[]string{".spec.ipFamilies", ".spec.ipFamilyPolicy"}},
		{"ExternalName allocates nothing", `{type: ExternalName, externalName: db.example.com}`, nil},
		{"NodePort: each port without one, by its key", `{type: NodePort, ports: [{port: 80}, {port: 53, protocol: UDP}, {port: 443, nodePort: 30443}]}`,
			[]string{".spec.clusterIP", ".spec.clusterIPs", ".spec.ipFamilies", ".spec.ipFamilyPolicy",
				`.spec.ports[port=80,protocol="TCP"].nodePort`, `.spec.ports[port=53,protocol="UDP"].nodePort`}},
		{"LoadBalancer", `{type: LoadBalancer, ports: [{port: 80}]}`,
			[]string{".spec.clusterIP", ".spec.clusterIPs", ".spec.ipFamilies", ".spec.ipFamilyPolicy", `.spec.ports[port=80,protocol="TCP"].nodePort`}},
		{"LoadBalancer without node ports", `{type: LoadBalancer, allocateLoadBalancerNodePorts: false, ports: [{port: 80}]}`,
			[]string{".spec.clusterIP", ".spec.clusterIPs", ".spec.ipFamilies", ".spec.ipFamilyPolicy"}},
		{"LoadBalancer, traffic policy Local: the health-check node port", `{type: LoadBalancer, externalTrafficPolicy: Local, ports: [{port: 80}]}`,
			[]string{".spec.clusterIP", ".spec.clusterIPs", ".spec.ipFamilies", ".spec.ipFamilyPolicy", `.spec.ports[port=80,protocol="TCP"].nodePort`, ".spec.healthCheckNodePort"}},
		{"an update that keeps what was allocated, changed to NodePort", `{type: NodePort, clusterIP: 10.96.0.9, clusterIPs: [10.96.0.9], ipFamilies: [IPv4], ipFamilyPolicy: SingleStack, ports: [{port: 80, protocol: TCP}]}`,
			[]string{`.spec.ports[port=80,protocol="TCP"].nodePort`}},
		{"nothing left to allocate", `{type: LoadBalancer, externalTrafficPolicy: Local, healthCheckNodePort: 31000, clusterIP: 10.96.0.9, clusterIPs: [10.96.0.9], ipFamilies: [IPv4], ipFamilyPolicy: SingleStack, ports: [{port: 80, nodePort: 30080}]}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := &unstructured.Unstructured{}
			if err := yaml.Unmarshal([]byte("{apiVersion: v1, kind: Service, metadata: {name: s}, spec: "+tt.spec+"}"), &obj.Object); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range defaults.Allocated(obj) {
				got = append(got, pathlang.Path(p).String())
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}
