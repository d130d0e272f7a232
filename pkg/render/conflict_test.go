package render_test

import (
	"bytes"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/conflict"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/render"
)

// The removals of an apply that drops a sidecar and the defaults an
// exported manifest carried: removed, reset (unchanged or not) and a
// default that depends on other fields.
func TestConflictRemovals(t *testing.T) {
	live := &unstructured.Unstructured{}
	if err := live.UnmarshalJSON([]byte(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"shop"},
		"spec":{"replicas":3,"strategy":{"type":"Sideways","rollingUpdate":{"maxSurge":1}},"template":{"metadata":{"labels":{"app.kubernetes.io/name":"web"}},"spec":{"restartPolicy":"Always",
		"containers":[{"name":"web","image":"nginx:latest","imagePullPolicy":"IfNotPresent"},{"name":"side","image":"busybox"}]}}}}`)); err != nil {
		t.Fatal(err)
	}
	path := func(s string) fieldpath.Path {
		p, err := ownership.ParsePath(s, live.Object)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	reset := func(s string, v interface{}, unchanged bool) conflict.Reset {
		return conflict.Reset{Path: ownership.Path(path(s)), Value: v, Unchanged: unchanged, PathElements: path(s)}
	}
	r := &conflict.Report{
		Kind: conflict.ReportKind, Action: conflict.ActionApply, FieldManager: "ci",
		Object:  ownership.RefOf(live),
		Removed: []ownership.Path{ownership.Path(path(`.spec.template.spec.containers[name="side"]`)), ownership.Path(path(`.spec.template.metadata.labels["app.kubernetes.io/name"]`))},
		Reset: []conflict.Reset{
			reset(".spec.replicas", int64(1), false),
			reset(".spec.template.spec.restartPolicy", "Always", true),
			reset(`.spec.template.spec.containers[name="web"].imagePullPolicy`, "Always", false),
			{Path: ownership.Path(path(".spec.clusterIP")), Value: "10.96.0.10", Unchanged: true, Kept: true, PathElements: path(".spec.clusterIP")},
		},
		MaybeReset: []conflict.MaybeReset{{Path: ownership.Path(path(".spec.strategy.rollingUpdate.maxSurge")), DependsOn: "the value of type", PathElements: path(".spec.strategy.rollingUpdate.maxSurge")}},
		Live:       live,
		Result:     live,
	}
	var buf bytes.Buffer
	render.ConflictExplanation(&buf, r, render.Options{Time: render.TimeRelative, Now: now, Palette: render.NewPalette(false)}, render.ConflictContext{ResourceArg: "deployment.apps/web", Namespace: "shop", FieldManager: "ci"})
	golden(t, "conflict-removals.golden", buf.Bytes())
}
