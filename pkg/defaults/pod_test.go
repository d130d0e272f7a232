package defaults

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// A Pod's create starts its status afresh: Pending, the QoS class of its
// containers' resources, the condition of gated scheduling (its time not
// known); what depends on feature gates is unknown.
func TestGeneratedPod(t *testing.T) {
	for _, c := range []struct {
		name, spec, status string
		unknown            []string
	}{
		{"best effort", `{containers: [{name: c}]}`, `{"phase":"Pending","qosClass":"BestEffort"}`, nil},
		{"guaranteed", `{containers: [{name: c, resources: {limits: {cpu: 1, memory: 1Gi}, requests: {cpu: "1000m", memory: 1Gi}}}]}`, `{"phase":"Pending","qosClass":"Guaranteed"}`, nil},
		{"burstable: a request below the limit", `{containers: [{name: c, resources: {limits: {cpu: 1, memory: 1Gi}, requests: {cpu: 1, memory: 1Mi}}}]}`, `{"phase":"Pending","qosClass":"Burstable"}`, nil},
		{"burstable: one container guaranteed, one not", `{initContainers: [{name: i}], containers: [{name: c, resources: {limits: {cpu: 1, memory: 1Gi}, requests: {cpu: 1, memory: 1Gi}}}]}`, `{"phase":"Pending","qosClass":"Burstable"}`, nil},
		{"an applied status is dropped; gated", `{schedulingGates: [{name: x}], containers: [{name: c}]}`,
			`{"conditions":[{"lastProbeTime":null,"message":"Scheduling is blocked due to non-empty scheduling gates","reason":"SchedulingGated","status":"False","type":"PodScheduled"}],"phase":"Pending","qosClass":"BestEffort"}`,
			[]string{`.status.conditions[type="PodScheduled"].lastTransitionTime`}},
		{"pod-level resources", `{resources: {limits: {cpu: 1}}, containers: [{name: c}]}`, `{"phase":"Pending"}`, []string{".spec.resources", ".status.qosClass"}},
		{"matchLabelKeys", `{topologySpreadConstraints: [{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, matchLabelKeys: [app]}], containers: [{name: c}]}`, `{"phase":"Pending","qosClass":"BestEffort"}`, []string{".spec.topologySpreadConstraints"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			u := &unstructured.Unstructured{}
			if err := yaml.Unmarshal([]byte(`{apiVersion: v1, kind: Pod, metadata: {name: p}, status: {phase: Running}, spec: `+c.spec+`}`), &u.Object); err != nil {
				t.Fatal(err)
			}
			unknown, _ := Generated(nil, u)
			b, _ := yaml.Marshal(u.Object["status"])
			j, _ := yaml.YAMLToJSON(b)
			if string(j) != c.status {
				t.Errorf("status\n got %s\nwant %s", j, c.status)
			}
			var got []string
			for _, p := range unknown {
				got = append(got, p.String())
			}
			if strings.Join(got, " ") != strings.Join(c.unknown, " ") {
				t.Errorf("unknown %q, want %q", got, c.unknown)
			}
		})
	}
	// An update keeps the status the storage has.
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Pod", "status": map[string]any{"phase": "Running"}}}
	if unknown, _ := Generated(u, u); unknown != nil || u.Object["status"].(map[string]any)["phase"] != "Running" {
		t.Errorf("update: %v %v", unknown, u.Object["status"])
	}
}
