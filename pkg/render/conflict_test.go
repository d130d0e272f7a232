package render_test

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kubectl-ssa/kubectl-ssa/internal/scenario"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/conflict"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/pathlang"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/remedy"
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
		p, err := pathlang.ParsePath(s, live.Object)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	// was: the live value the reset replaces; nil: unchanged.
	reset := func(s string, v, was any) v1alpha1.Reset {
		rs := v1alpha1.Reset{Path: pathlang.Path(path(s)), Value: v, Unchanged: was == nil, PathElements: path(s)}
		if was != nil {
			rs.Was = &was
		}
		return rs
	}
	r := &conflict.Simulation{ConflictReport: v1alpha1.ConflictReport{
		TypeMeta:  v1alpha1.TypeMeta{Kind: v1alpha1.ConflictReportKind},
		ApplyMeta: v1alpha1.ApplyMeta{Action: v1alpha1.ActionApply, FieldManager: "ci", Object: ownership.RefOf(live)},
		Removed:   []pathlang.Path{pathlang.Path(path(`.spec.template.spec.containers[name="side"]`)), pathlang.Path(path(`.spec.template.metadata.labels["app.kubernetes.io/name"]`))},
		Reset: []v1alpha1.Reset{
			reset(".spec.replicas", int64(1), int64(3)),
			reset(".spec.template.spec.restartPolicy", "Always", nil),
			reset(`.spec.template.spec.containers[name="web"].imagePullPolicy`, "Always", "IfNotPresent"),
			{Path: pathlang.Path(path(".spec.clusterIP")), Value: "10.96.0.10", Unchanged: true, Kept: true, PathElements: path(".spec.clusterIP")},
		},
		MaybeReset: []v1alpha1.MaybeReset{{Path: pathlang.Path(path(".spec.strategy.rollingUpdate.maxSurge")), DependsOn: "the value of type", PathElements: path(".spec.strategy.rollingUpdate.maxSurge")}},
	}, Live: live, Result: live}
	var buf bytes.Buffer
	explanation(&buf, r, render.Options{Time: render.TimeRelative, Now: now, Palette: render.NewPalette(false)}, remedy.Target{ResourceArg: "deployment.apps/web", Namespace: "shop", FieldManager: "ci"})
	golden(t, "conflict-removals.golden", buf.Bytes())
}

func conflictSimulation(t *testing.T) *conflict.Simulation {
	t.Helper()
	p, err := pathlang.ParsePath(".spec.replicas")
	if err != nil {
		t.Fatal(err)
	}
	at := metav1.NewTime(now.Add(-time.Hour))
	return &conflict.Simulation{ConflictReport: v1alpha1.ConflictReport{
		TypeMeta:  v1alpha1.TypeMeta{Kind: v1alpha1.ConflictReportKind},
		ApplyMeta: v1alpha1.ApplyMeta{Action: v1alpha1.ActionApply, FieldManager: "kubectl", Object: v1alpha1.ObjectRef{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "shop", Name: "web"}},
		Conflicts: []v1alpha1.Conflict{{Path: pathlang.Path(p), Manager: "kube-controller-manager", Operation: "Update", Subresource: "scale", APIVersion: "apps/v1", Time: &at, LiveValue: int64(4), AppliedValue: int64(2)}},
		Message:   "Apply failed with 1 conflict",
	}}
}

// --time none leaves the time out of the owner line, with no stray words.
func TestConflictOwnerLineTime(t *testing.T) {
	tests := []struct {
		time render.TimeMode
		want string
	}{
		{render.TimeRelative, `owner:      "kube-controller-manager" (Update with subresource "scale", apps/v1, last write 60m ago)`},
		{render.TimeNone, `owner:      "kube-controller-manager" (Update with subresource "scale", apps/v1)` + "\n"},
	}
	for _, tt := range tests {
		var buf bytes.Buffer
		explanation(&buf, conflictSimulation(t), render.Options{Time: tt.time, Now: now, Palette: render.NewPalette(false)}, remedy.Target{ResourceArg: "deployment.v1.apps/web", Namespace: "shop", FieldManager: "kubectl"})
		if !strings.Contains(buf.String(), tt.want) {
			t.Errorf("--time %s: want %q in\n%s", tt.time, tt.want, buf.String())
		}
	}
}

// The autoscaler note starts each handover from a manager that holds
// replicas; with none, it says the autoscaler owns them already.
func TestAutoscalerNote(t *testing.T) {
	tests := []struct {
		name    string
		holders []v1alpha1.ReplicasHolder
		want    []string
		not     []string
	}{
		{
			name:    "client-side apply",
			holders: []v1alpha1.ReplicasHolder{{Manager: "kubectl-client-side-apply", LastApplied: true}},
			want: []string{"$ kubectl ssa handover deployment.v1.apps/web -n shop --field .spec.replicas --from kubectl-client-side-apply --to kube-controller-manager\n",
				`also takes .spec.replicas out of the last-applied annotation of "kubectl-client-side-apply"`,
				"(not from the autoscaler's controller: it writes .spec.replicas again at its next scaling; see the note above)"},
			// No command takes replicas from the autoscaler.
			not: []string{"--from kube-controller-manager"},
		},
		{
			name: "the autoscaler alone",
			want: []string{"It is the autoscaler's already (nothing else holds it): leave replicas out of your manifest."},
			not:  []string{"--to kube-controller-manager"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := conflictSimulation(t)
			r.Autoscalers = []v1alpha1.Autoscaler{{Name: "web", MinReplicas: 4, MaxReplicas: 8}}
			r.ReplicasHolders = tt.holders
			var buf bytes.Buffer
			explanation(&buf, r, render.Options{Time: render.TimeNone, Palette: render.NewPalette(false)}, remedy.Target{ResourceArg: "deployment.v1.apps/web", Namespace: "shop", FieldManager: "kubectl"})
			for _, w := range tt.want {
				if !strings.Contains(buf.String(), w) {
					t.Errorf("want %q in\n%s", w, buf.String())
				}
			}
			for _, w := range tt.not {
				if strings.Contains(buf.String(), w) {
					t.Errorf("do not want %q in\n%s", w, buf.String())
				}
			}
		})
	}
}

// A Secret's stringData is write-only: its live value is in data, and it
// can't be shared by setting an equal value.
func TestConflictOnStringData(t *testing.T) {
	secret := func(key string) string {
		return "{apiVersion: v1, kind: Secret, metadata: {name: tls, namespace: shop}, stringData: {tls.key: " + key + "}}"
	}
	s := (&scenario.State{}).Run(t, scenario.Apply{Manager: "cert-sync", Manifest: secret("from-cert-sync")})
	r, err := conflict.Simulate(conflict.Input{Live: s.Live, Applied: scenario.Manifest(t, secret("from-git")), FieldManager: "argocd-controller", Schema: conflict.BuiltinSchema()})
	if err != nil {
		t.Fatal(err)
	}
	r.RedactSecrets()
	var buf bytes.Buffer
	explanation(&buf, r, render.Options{Time: render.TimeNone, Palette: render.NewPalette(false)}, remedy.Target{ResourceArg: "secret/tls", Namespace: "shop", FieldManager: "argocd-controller"})
	for _, want := range []string{
		`live value: (write-only: the apiserver stores it as .data["tls.key"])`,
		`.stringData["tls.key"]: can't be shared: stringData is write-only (stored as .data["tls.key"])`,
	} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("want %q in\n%s", want, buf.String())
		}
	}
	if strings.Contains(buf.String(), "(not set)") || strings.Contains(buf.String(), "from-") {
		t.Errorf("a write-only field shown as not set, or a secret value shown:\n%s", buf.String())
	}
}

// explanation renders r as explain-conflict does, with its resolutions
// built for t.
func explanation(w io.Writer, r *conflict.Simulation, o render.Options, t remedy.Target) {
	r.Resolutions = conflict.Resolutions(r, t)
	render.ConflictExplanation(w, &r.ConflictReport, o, t)
}
