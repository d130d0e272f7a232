package conflict_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/kubectl-ssa/kubectl-ssa/internal/scenario"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/conflict"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/convert"
)

// HorizontalPodAutoscaler is served at autoscaling/v1 and v2, which differ
// in shape. The setup runs every write through the apiserver's field
// manager at the version the writer used, with the apiserver's conversion
// (apiVersionConverter: pkg/convert, checked against a real apiserver by
// test/e2e); the object
// is kept at the version of the last write and read at the next one's, as
// the apiserver converts its stored object for each request. The expected
// results are what a real apiserver answers: test/e2e/hpa_test.go
// (TestHPAApplyAcrossVersions) runs the same writes but the status one
// against it and compares with its dry run.

var hpaGK = schema.GroupKind{Group: "autoscaling", Kind: "HorizontalPodAutoscaler"}

// hpaWrite is a write of the HorizontalPodAutoscaler at a version: an
// apply of manifest, or an update (create) of the whole object manifest,
// or an update of the live object by mutate.
type hpaWrite struct {
	manager     string
	version     string
	apply       bool
	subresource string
	manifest    string
	mutate      func(u *unstructured.Unstructured)
}

// at returns the live object at version, as the apiserver reads it for a
// request at that version.
func at(t testing.TB, s *state, version string) *unstructured.Unstructured {
	t.Helper()
	if s.Live == nil {
		return nil
	}
	out, ok, err := convert.ToVersion(s.Live, version)
	if !ok || err != nil {
		t.Fatalf("reading the live object at %s: %v %v", version, ok, err)
	}
	return out
}

func (w hpaWrite) Run(t testing.TB, s *state) {
	t.Helper()
	gvk := hpaGK.WithVersion(w.version)
	var versions []schema.GroupVersion
	for _, v := range []string{"v1", "v2"} {
		versions = append(versions, schema.GroupVersion{Group: hpaGK.Group, Version: v})
	}
	fm, err := managedfields.NewDefaultFieldManager(conflict.BuiltinSchema(), scenario.Converter{}, scenario.NopDefaulter{}, scenario.ZeroCreater{}, gvk, gvk.GroupVersion(), w.subresource,
		conflict.ResetFields(gvk, w.subresource, true, versions))
	if err != nil {
		t.Fatal(err)
	}
	live := at(t, s, w.version)
	var out runtime.Object
	switch {
	case w.apply:
		obj := manifest(t, w.manifest)
		if live == nil {
			live = s.Base(t, obj)
		}
		out, err = fm.Apply(live, obj, w.manager, false)
	case w.manifest != "":
		obj := manifest(t, w.manifest)
		if live == nil {
			live = s.Base(t, obj)
		}
		out, err = fm.Update(live, obj, w.manager)
	default:
		obj := live.DeepCopy()
		w.mutate(obj)
		out, err = fm.Update(live, obj, w.manager)
	}
	if err != nil {
		t.Fatalf("setup: %s by %s at %s: %v", map[bool]string{true: "apply", false: "update"}[w.apply], w.manager, w.version, err)
	}
	s.Store(t, out)
}

// autoscaleV1 is what kubectl autoscale deployment/web --min 1 --max 3
// --cpu-percent 80 creates when it falls back to autoscaling/v1.
const autoscaleV1 = `
apiVersion: autoscaling/v1
kind: HorizontalPodAutoscaler
metadata: {name: web, namespace: shop}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 1
  maxReplicas: 3
  targetCPUUtilizationPercentage: 80
`

// hpaV2 is a v2 manifest of the same autoscaler.
func hpaV2(maxReplicas int, metrics string) string {
	return fmt.Sprintf(`
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: web, namespace: shop}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 1
  maxReplicas: %d
  metrics:%s
`, maxReplicas, metrics)
}

func cpuMetric(percent int) string {
	return fmt.Sprintf(`
  - type: Resource
    resource: {name: cpu, target: {type: Utilization, averageUtilization: %d}}`, percent)
}

const memoryMetric = `
  - type: Resource
    resource: {name: memory, target: {type: AverageValue, averageValue: 500Mi}}`

// legacyV1 is a v1 manifest applied by a client that knows only v1.
func legacyV1(maxReplicas, cpu int) string {
	return fmt.Sprintf(`
apiVersion: autoscaling/v1
kind: HorizontalPodAutoscaler
metadata: {name: web, namespace: shop}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  maxReplicas: %d
  targetCPUUtilizationPercentage: %d
`, maxReplicas, cpu)
}

// Field sets as the apiserver records them. scaleTargetRef is an atomic
// struct at v1, not at v2.
var (
	targetFields      = []string{".spec.scaleTargetRef.apiVersion", ".spec.scaleTargetRef.kind", ".spec.scaleTargetRef.name"}
	autoscaleV1Fields = []string{".spec.maxReplicas", ".spec.minReplicas", ".spec.scaleTargetRef", ".spec.targetCPUUtilizationPercentage"}
	hpaV2Fields       = append([]string{".spec.maxReplicas", ".spec.metrics", ".spec.minReplicas"}, targetFields...)
	legacyV1Fields    = []string{".spec.maxReplicas", ".spec.scaleTargetRef", ".spec.targetCPUUtilizationPercentage"}
)

func TestSimulateHPAAcrossVersions(t *testing.T) {
	autoscaled := []hpaWrite{{manager: "kubectl-autoscale", version: "v1", manifest: autoscaleV1}}
	platformV2 := []hpaWrite{{manager: "platform", version: "v2", apply: true, manifest: hpaV2(5, cpuMetric(50)+memoryMetric)}}
	tests := []struct {
		name    string
		ops     []hpaWrite
		applier string
		applied string
		force   bool
		want    want
		// values of the conflicts, at the conflicting manager's version
		values [][2]any
	}{
		{
			name:    "v1 writer, v2 apply: the fields it changes conflict at v1",
			ops:     autoscaled,
			applier: "kubectl",
			applied: hpaV2(4, cpuMetric(60)),
			want: want{
				Action: v1alpha1.ActionApply,
				Conflicts: []conflictView{
					{Manager: "kubectl-autoscale", Operation: "Update", Path: ".spec.maxReplicas"},
					{Manager: "kubectl-autoscale", Operation: "Update", Path: ".spec.targetCPUUtilizationPercentage"},
				},
				Message: "Apply failed with 2 conflicts: conflicts with \"kubectl-autoscale\" using autoscaling/v1:\n- .spec.maxReplicas\n- .spec.targetCPUUtilizationPercentage",
				Managed: []entryView{{Manager: "kubectl-autoscale", Operation: "Update", APIVersion: "autoscaling/v1", Fields: autoscaleV1Fields}},
			},
			values: [][2]any{{int64(3), int64(4)}, {int64(80), int64(60)}},
		},
		{
			name:    "v1 writer, forced v2 apply: it keeps what the apply did not change",
			ops:     autoscaled,
			applier: "kubectl",
			applied: hpaV2(4, cpuMetric(60)),
			force:   true,
			want: want{
				Action: v1alpha1.ActionApply,
				Conflicts: []conflictView{
					{Manager: "kubectl-autoscale", Operation: "Update", Path: ".spec.maxReplicas"},
					{Manager: "kubectl-autoscale", Operation: "Update", Path: ".spec.targetCPUUtilizationPercentage"},
				},
				Managed: []entryView{
					{Manager: "kubectl", Operation: "Apply", APIVersion: "autoscaling/v2", Fields: hpaV2Fields},
					{Manager: "kubectl-autoscale", Operation: "Update", APIVersion: "autoscaling/v1", Fields: []string{".spec.minReplicas", ".spec.scaleTargetRef"}},
				},
			},
			values: [][2]any{{int64(3), int64(4)}, {int64(80), int64(60)}},
		},
		{
			name:    "v1 writer, v2 apply of the same values and one more metric: no conflict",
			ops:     autoscaled,
			applier: "kubectl",
			applied: hpaV2(3, cpuMetric(80)+memoryMetric),
			want: want{
				Action: v1alpha1.ActionApply,
				Managed: []entryView{
					{Manager: "kubectl", Operation: "Apply", APIVersion: "autoscaling/v2", Fields: hpaV2Fields},
					{Manager: "kubectl-autoscale", Operation: "Update", APIVersion: "autoscaling/v1", Fields: autoscaleV1Fields},
				},
			},
		},
		{
			name:    "v2 applier, v1 apply: a new CPU target changes the atomic metrics list",
			ops:     platformV2,
			applier: "legacy",
			applied: legacyV1(6, 70),
			want: want{
				Action: v1alpha1.ActionApply,
				Conflicts: []conflictView{
					{Manager: "platform", Operation: "Apply", Path: ".spec.maxReplicas"},
					{Manager: "platform", Operation: "Apply", Path: ".spec.metrics"},
				},
				Message: "Apply failed with 2 conflicts: conflicts with \"platform\":\n- .spec.maxReplicas\n- .spec.metrics",
				Managed: []entryView{{Manager: "platform", Operation: "Apply", APIVersion: "autoscaling/v2", Fields: hpaV2Fields}},
			},
		},
		{
			name:    "v2 applier, forced v1 apply: maxReplicas and the metrics change hands",
			ops:     platformV2,
			applier: "legacy",
			applied: legacyV1(6, 70),
			force:   true,
			want: want{
				Action: v1alpha1.ActionApply,
				Conflicts: []conflictView{
					{Manager: "platform", Operation: "Apply", Path: ".spec.maxReplicas"},
					{Manager: "platform", Operation: "Apply", Path: ".spec.metrics"},
				},
				Managed: []entryView{
					{Manager: "legacy", Operation: "Apply", APIVersion: "autoscaling/v1", Fields: legacyV1Fields},
					{Manager: "platform", Operation: "Apply", APIVersion: "autoscaling/v2", Fields: append([]string{".spec.minReplicas"}, targetFields...)},
				},
			},
		},
		{
			name:    "v2 applier, v1 apply of the same values: no conflict, though v1 reorders the metrics",
			ops:     platformV2,
			applier: "legacy",
			applied: legacyV1(5, 50),
			want: want{
				Action: v1alpha1.ActionApply,
				Managed: []entryView{
					{Manager: "legacy", Operation: "Apply", APIVersion: "autoscaling/v1", Fields: legacyV1Fields},
					{Manager: "platform", Operation: "Apply", APIVersion: "autoscaling/v2", Fields: hpaV2Fields},
				},
			},
		},
		{
			name: "status written at v2 does not conflict with a v1 apply",
			ops: append(append([]hpaWrite{}, autoscaled...), hpaWrite{manager: "kube-controller-manager", version: "v2", subresource: "status", mutate: func(u *unstructured.Unstructured) {
				_ = unstructured.SetNestedSlice(u.Object, []any{map[string]any{
					"type": "ScalingActive", "status": "False", "reason": "FailedGetScale", "lastTransitionTime": "2026-01-02T03:04:05Z",
				}}, "status", "conditions")
			}}),
			applier: "kubectl-autoscale",
			applied: legacyV1(3, 80),
			want: want{
				Action: v1alpha1.ActionApply,
				Managed: []entryView{
					{Manager: "kubectl-autoscale", Operation: "Apply", APIVersion: "autoscaling/v1", Fields: legacyV1Fields},
					{Manager: "kube-controller-manager", Operation: "Update", Subresource: "status", APIVersion: "autoscaling/v2", Fields: []string{
						".status.conditions", `.status.conditions[type="ScalingActive"]`, `.status.conditions[type="ScalingActive"].lastTransitionTime`,
						`.status.conditions[type="ScalingActive"].reason`, `.status.conditions[type="ScalingActive"].status`, `.status.conditions[type="ScalingActive"].type`,
					}},
					{Manager: "kubectl-autoscale", Operation: "Update", APIVersion: "autoscaling/v1", Fields: autoscaleV1Fields},
				},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &state{}
			for _, op := range tt.ops {
				op.Run(t, s)
			}
			applied := manifest(t, tt.applied)
			live := at(t, s, applied.GroupVersionKind().Version)
			liveBefore := live.DeepCopy()
			r, err := conflict.Simulate(conflict.Input{
				Live:         live,
				Applied:      applied,
				FieldManager: tt.applier,
				Force:        tt.force,
				Schema:       conflict.BuiltinSchema(),
				HasStatus:    true,
			})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, reportView(t, r), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Simulate (-want +got):\n%s", diff)
			}
			var values [][2]any
			for _, c := range r.Conflicts {
				values = append(values, [2]any{c.LiveValue, c.AppliedValue})
			}
			if tt.values != nil {
				if diff := cmp.Diff(tt.values, values); diff != "" {
					t.Errorf("conflict values [live, applied] (-want +got):\n%s", diff)
				}
			}
			if diff := cmp.Diff(liveBefore.Object, live.Object); diff != "" {
				t.Errorf("Simulate changed the live object (-before +after):\n%s", diff)
			}
		})
	}
}

// A kind whose versions kubectl-ssa can't convert: no prediction, an
// error that says what to do instead.
func TestSimulateUnconvertible(t *testing.T) {
	live := manifest(t, `
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: web
  namespace: shop
  managedFields:
  - manager: old-controller
    operation: Update
    apiVersion: networking.k8s.io/v1beta1
    fieldsType: FieldsV1
    fieldsV1: {"f:spec":{"f:rules":{}}}
  - manager: platform
    operation: Apply
    apiVersion: networking.k8s.io/v1
    fieldsType: FieldsV1
    fieldsV1: {"f:spec":{"f:defaultBackend":{"f:service":{"f:name":{},"f:port":{"f:number":{}}}}}}
spec:
  defaultBackend:
    service: {name: web, port: {number: 80}}
  rules:
  - host: example.com
`)
	applied := manifest(t, `
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: web, namespace: shop}
spec:
  defaultBackend:
    service: {name: web, port: {number: 8080}}
`)
	gadget := func(version, fields string) *unstructured.Unstructured {
		return manifest(t, fmt.Sprintf(`
apiVersion: example.com/%s
kind: Gadget
metadata:
  name: g
  namespace: shop
  managedFields:
  - {manager: old, operation: Apply, apiVersion: example.com/v1, fieldsType: FieldsV1, fieldsV1: {"f:spec":{"f:size":{}}}}
spec: {size: s%s}
`, version, fields))
	}
	in := conflict.Input{Live: live, Applied: applied, FieldManager: "platform", Schema: conflict.BuiltinSchema(), HasStatus: true}
	webhook := conflict.Input{Live: gadget("v2", ""), Applied: gadget("v2", ", color: red"), FieldManager: "new", Schema: managedfields.NewDeducedTypeConverter(),
		CRD: true, ConversionWebhook: true}
	webhook.Applied.SetManagedFields(nil)
	tests := []struct {
		name string
		in   conflict.Input
		want *conflict.UnconvertibleError
		msg  string
	}{
		{
			name: "built-in kind whose versions differ in shape",
			in:   in,
			want: &conflict.UnconvertibleError{Object: "Ingress/shop/web", Kind: schema.GroupKind{Group: "networking.k8s.io", Kind: "Ingress"},
				From: "v1", To: []string{"v1beta1"}, Managers: []string{"old-controller"}},
			msg: `Ingress/shop/web: can't predict this apply: "old-controller" recorded fields at networking.k8s.io/v1beta1, which the apiserver compares there, ` +
				`and kubectl-ssa can't convert Ingress.networking.k8s.io from networking.k8s.io/v1 to it (only the apiserver can): ask the apiserver with kubectl apply --server-side --dry-run=server`,
		},
		{
			name: "custom resource with a conversion webhook",
			in:   webhook,
			want: &conflict.UnconvertibleError{Object: "Gadget/shop/g", Kind: schema.GroupKind{Group: "example.com", Kind: "Gadget"},
				From: "v2", To: []string{"v1"}, Managers: []string{"old"}},
			msg: `Gadget/shop/g: can't predict this apply: "old" recorded fields at example.com/v1, which the apiserver compares there, ` +
				`and kubectl-ssa can't convert Gadget.example.com from example.com/v2 to it (a conversion webhook converts it): ask the apiserver with kubectl apply --server-side --dry-run=server`,
		},
	}
	for _, tt := range tests {
		for _, force := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s force=%v", tt.name, force), func(t *testing.T) {
				in := tt.in
				in.Force = force
				r, err := conflict.Simulate(in)
				var ue *conflict.UnconvertibleError
				if !errors.As(err, &ue) {
					t.Fatalf("Simulate = %+v, %v; want an UnconvertibleError", r, err)
				}
				if diff := cmp.Diff(tt.want, ue, cmpopts.IgnoreFields(conflict.UnconvertibleError{}, "Err")); diff != "" {
					t.Errorf("error (-want +got):\n%s", diff)
				}
				if err.Error() != tt.msg {
					t.Errorf("message:\n got %s\nwant %s", err, tt.msg)
				}
			})
		}
	}

	// Without the webhook, a custom resource converts by its apiVersion.
	webhook.ConversionWebhook = false
	if _, err := conflict.Simulate(webhook); err != nil {
		t.Errorf("custom resource without a webhook: %v", err)
	}

	// A version the server no longer serves: the apiserver drops its
	// managers, and so does the prediction.
	in.Force = false
	in.Served = func(gvk schema.GroupVersionKind) bool { return gvk.Version == "v1" }
	r, err := conflict.Simulate(in)
	if err != nil {
		t.Fatal(err)
	}
	got := reportView(t, r)
	want := want{Action: v1alpha1.ActionApply, Managed: []entryView{
		{Manager: "platform", Operation: "Apply", APIVersion: "networking.k8s.io/v1", Fields: []string{".spec.defaultBackend.service.name", ".spec.defaultBackend.service.port"}},
	}}
	if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("unserved version (-want +got):\n%s", diff)
	}
}
