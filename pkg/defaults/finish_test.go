package defaults

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

func TestFinish(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"service without affinity", `{apiVersion: v1, kind: Service, spec: {sessionAffinityConfig: {clientIP: {timeoutSeconds: 10800}}}}`, `{apiVersion: v1, kind: Service, spec: {}}`},
		{"service with ClientIP", `{apiVersion: v1, kind: Service, spec: {sessionAffinity: ClientIP, sessionAffinityConfig: {clientIP: {timeoutSeconds: 5}}}}`, `{apiVersion: v1, kind: Service, spec: {sessionAffinity: ClientIP, sessionAffinityConfig: {clientIP: {timeoutSeconds: 5}}}}`},
		{"claim templates", `{apiVersion: apps/v1, kind: StatefulSet, spec: {volumeClaimTemplates: [{metadata: {name: d}}]}}`, `{apiVersion: apps/v1, kind: StatefulSet, spec: {volumeClaimTemplates: [{apiVersion: v1, kind: PersistentVolumeClaim, metadata: {name: d}}]}}`},
		{"limit range", `{apiVersion: v1, kind: LimitRange, spec: {limits: [{type: Container, max: {cpu: "2"}, min: {memory: 1Mi}, defaultRequest: {cpu: 100m}}, {type: Pod, max: {cpu: "4"}}]}}`,
			`{apiVersion: v1, kind: LimitRange, spec: {limits: [{type: Container, max: {cpu: "2"}, min: {memory: 1Mi}, default: {cpu: "2"}, defaultRequest: {cpu: 100m, memory: 1Mi}}, {type: Pod, max: {cpu: "4"}}]}}`},
		{"other kinds", `{apiVersion: v1, kind: ConfigMap, spec: {sessionAffinityConfig: {}}}`, `{apiVersion: v1, kind: ConfigMap, spec: {sessionAffinityConfig: {}}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var in, want map[string]interface{}
			if err := yaml.Unmarshal([]byte(tc.in), &in); err != nil {
				t.Fatal(err)
			}
			if err := yaml.Unmarshal([]byte(tc.want), &want); err != nil {
				t.Fatal(err)
			}
			u := &unstructured.Unstructured{Object: in}
			Finish(u)
			if diff := cmp.Diff(want, u.Object); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}
