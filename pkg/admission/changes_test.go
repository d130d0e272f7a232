package admission

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/pathlang"
)

// opStrings are ops as the tests compare them: op path value.
func opStrings(ops []v1alpha1.AdmissionOp) []string {
	out := []string{}
	for _, op := range ops {
		s := op.Op + " " + pathlang.FromSegments(op.Path).String()
		if op.Value != nil {
			s += " " + opJSON(op.Value)
		}
		out = append(out, s)
	}
	return out
}

func opJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

const envPod = `
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers:
  - name: app
    image: nginx
    env: [{name: A, value: "1"}]
  - name: side
    image: busybox
`

// A mutating policy's change is said as what it did: one env var added
// is that entry added (issue 35: it read "replaces .spec.containers").
func TestChangeOps(t *testing.T) {
	tests := []struct {
		name  string
		after string // the containers after the policy
		want  []string
	}{
		{
			name:  "one env var added",
			after: `[{name: app, image: nginx, env: [{name: A, value: "1"}, {name: B, value: "2"}]}, {name: side, image: busybox}]`,
			want:  []string{`append .spec.containers[name="app"].env {"name":"B","value":"2"}`},
		},
		{
			name:  "an env list where there was none, and an image changed",
			after: `[{name: app, image: nginx, env: [{name: A, value: "1"}]}, {name: side, image: "busybox:1.37", env: [{name: C, value: "3"}]}]`,
			want:  []string{`set .spec.containers[name="side"].env [{"name":"C","value":"3"}]`, `replace .spec.containers[name="side"].image "busybox:1.37"`},
		},
		{
			name:  "a container added",
			after: `[{name: app, image: nginx, env: [{name: A, value: "1"}]}, {name: side, image: busybox}, {name: proxy, image: envoy}]`,
			want:  []string{`append .spec.containers {"image":"envoy","name":"proxy"}`},
		},
		{
			name:  "an item inserted first: appending would not give the server's order",
			after: `[{name: proxy, image: envoy}, {name: app, image: nginx, env: [{name: A, value: "1"}]}, {name: side, image: busybox}]`,
			want:  []string{`replace .spec.containers [{"image":"envoy","name":"proxy"},{"env":[{"name":"A","value":"1"}],"image":"nginx","name":"app"},{"image":"busybox","name":"side"}]`},
		},
		{
			name:  "a container removed",
			after: `[{name: app, image: nginx, env: [{name: A, value: "1"}]}]`,
			want:  []string{`replace .spec.containers [{"env":[{"name":"A","value":"1"}],"image":"nginx","name":"app"}]`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := obj(t, envPod)
			after := obj(t, "spec: {containers: "+tt.after+"}")
			v, _, _ := unstructured.NestedFieldNoCopy(after.Object, "spec", "containers")
			if diff := cmp.Diff(tt.want, opStrings(changeOps(before.Object, []string{"spec", "containers"}, v))); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// Through the evaluation: the step's ops are the added entry, and made on
// the object they give the policy's result.
func TestEvaluatedPolicyAddsOneEnvVar(t *testing.T) {
	pod := obj(t, envPod)
	result := obj(t, envPod)
	containers, _, _ := unstructured.NestedSlice(result.Object, "spec", "containers")
	app := containers[0].(map[string]any)
	app["env"] = append(app["env"].([]any), map[string]any{"name": "B", "value": "2"})
	_ = unstructured.SetNestedSlice(result.Object, containers, "spec", "containers")
	e := &fixedEvaluator{res: &PolicyResult{
		Object:   result,
		Bindings: []BindingResult{{Kind: v1alpha1.MutatingAdmissionPolicy, Policy: "env", Binding: "env", Outcome: Mutated, Paths: [][]string{{"spec", "containers"}}}},
	}}
	cfg := &Config{
		MutatingPolicies: []*unstructured.Unstructured{obj(t, "metadata: {name: env}\nspec:\n  matchConstraints:\n    resourceRules: [{operations: ['*'], apiGroups: [''], apiVersions: ['*'], resources: [pods]}]\n")},
		MutatingBindings: []*unstructured.Unstructured{obj(t, "metadata: {name: env}\nspec: {policyName: env}\n")},
		Policies:         e,
	}
	r := Evaluate(cfg, Request{Object: pod, Resource: pods.WithVersion("v1"), Namespaced: true, NamespaceLabels: map[string]string{}})
	var got []string
	for _, s := range r.Steps {
		got = append(got, opStrings(s.Ops)...)
	}
	if diff := cmp.Diff([]string{`append .spec.containers[name="app"].env {"name":"B","value":"2"}`}, got); diff != "" {
		t.Errorf("steps %q (-want +got):\n%s", steps(r), diff)
	}
	applied := pod.DeepCopy()
	Apply(r, applied)
	if diff := cmp.Diff(result.Object, applied.Object); diff != "" {
		t.Errorf("the ops made on the object (-policy's result +prediction):\n%s", diff)
	}
}
