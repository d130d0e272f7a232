package render_test

import (
	"bytes"
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/conflict"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/diff"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/pathlang"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/remedy"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/render"
)

// admissionOfEveryKind is an admission report with a step of each effect,
// a caveat and a reason only a line of its own says.
func admissionOfEveryKind() *v1alpha1.AdmissionReport {
	return &v1alpha1.AdmissionReport{
		Exact:    false,
		Reasons:  []string{"admission is not fully known: could not list mutatingwebhookconfigurations of admissionregistration.k8s.io (forbidden: check with kubectl auth can-i list mutatingwebhookconfigurations.admissionregistration.k8s.io)"},
		Warnings: []string{`would violate PodSecurity "restricted:latest": runAsNonRoot != true`},
		Steps: []v1alpha1.AdmissionStep{
			{Kind: v1alpha1.BuiltinPlugin, Name: "DefaultStorageClass", Effect: v1alpha1.EffectMutates, Ops: []v1alpha1.AdmissionOp{{Op: v1alpha1.OpSet, Path: []string{"spec", "storageClassName"}, Value: "standard"}}},
			{Kind: v1alpha1.BuiltinPlugin, Name: "StorageObjectInUseProtection", Effect: v1alpha1.EffectMutates, Ops: []v1alpha1.AdmissionOp{{Op: v1alpha1.OpAppend, Path: []string{"metadata", "finalizers"}, Value: "kubernetes.io/pvc-protection"}}},
			{Kind: v1alpha1.MutatingAdmissionPolicy, Name: "team (binding team)", Effect: v1alpha1.EffectMayMutate},
			{Kind: v1alpha1.MutatingWebhook, Name: "hooks/inject.example.com", Effect: v1alpha1.EffectMayMutate, Caveats: []string{"its 1 matchConditions (CEL) were not evaluated: it may not be called"}},
			{Kind: v1alpha1.BuiltinPlugin, Name: "PodSecurity", Effect: v1alpha1.EffectWarns, Message: `would violate PodSecurity "restricted:latest": runAsNonRoot != true`},
			{Kind: v1alpha1.ValidatingAdmissionPolicy, Name: "max-replicas (binding max-replicas)", Effect: v1alpha1.EffectMayDeny},
			{Kind: v1alpha1.ValidatingAdmissionPolicy, Name: "labels (binding warn)", Effect: v1alpha1.EffectMayWarn},
			{Kind: v1alpha1.ValidatingAdmissionPolicy, Name: "labels (binding audit)", Effect: v1alpha1.EffectAudits},
		},
	}
}

// The admission lines of the conflict and diff views, for a prediction
// that is not exact, and for a denial.
func TestAdmissionViews(t *testing.T) {
	live := loadObject(t, "deployment.yaml")
	src, err := conflict.NewOfflineSource([]*unstructured.Unstructured{live}, nil)
	if err != nil {
		t.Fatal(err)
	}
	manifest := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web", "namespace": "shop", "labels": map[string]any{"app.kubernetes.io/name": "web"}}}}
	opts := render.Options{Time: render.TimeRelative, Now: now, Palette: render.NewPalette(false)}
	target := remedy.Target{File: "ci.yaml", ResourceArg: "deployment.v1.apps/web", Namespace: "shop", FieldManager: "ci"}
	for _, c := range []struct {
		name string
		adm  func() *v1alpha1.AdmissionReport
	}{
		{"admission-inexact", admissionOfEveryKind},
		{"admission-denied", func() *v1alpha1.AdmissionReport {
			return &v1alpha1.AdmissionReport{Exact: true, Reasons: []string{}, Warnings: []string{},
				Denied: `pods "host" is forbidden: violates PodSecurity "baseline:latest": host namespaces (hostNetwork=true)`,
				Steps: []v1alpha1.AdmissionStep{{Kind: v1alpha1.BuiltinPlugin, Name: "PodSecurity", Effect: v1alpha1.EffectDenies,
					Message: `pods "host" is forbidden: violates PodSecurity "baseline:latest": host namespaces (hostNetwork=true)`}}}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, err := conflict.Explain(context.Background(), src, manifest, conflict.Options{FieldManager: "ci"})
			if err != nil {
				t.Fatal(err)
			}
			r.Admission = c.adm()
			if r.Admission.Denied != "" {
				r.Message = r.Admission.Denied
			}
			r.Resolutions = conflict.Resolutions(r, target)
			golden(t, c.name+".golden", views(t, r, opts, target))
		})
	}
}

// A Pod's create as the modelled plugins complete it: ops into list
// items, a generated name (said, listed as not known, never invented), an
// atomic list, a replaced value, a plugin whose order is not known.
func TestAdmissionPodView(t *testing.T) {
	src, err := conflict.NewOfflineSource(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	manifest := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": "web", "namespace": "shop"},
		"spec": map[string]any{
			"tolerations": []any{map[string]any{"key": "gpu", "operator": "Exists"}},
			"containers":  []any{map[string]any{"name": "c", "image": "nginx"}}}}}
	r, err := conflict.Explain(context.Background(), src, manifest, conflict.Options{FieldManager: "ci"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range r.ManagedFields {
		// Stamped by the simulation with the clock: the view's own.
		at := metav1.NewTime(now)
		r.ManagedFields[i].Time = &at
	}
	mountPath := "/var/run/secrets/kubernetes.io/serviceaccount"
	r.Admission = &v1alpha1.AdmissionReport{Exact: false, Reasons: []string{"admission plugin LimitRanger: 2 LimitRanges of namespace shop set defaults for this Pod, and the apiserver applies them in no fixed order"}, Warnings: []string{},
		Steps: []v1alpha1.AdmissionStep{
			{Kind: v1alpha1.BuiltinPlugin, Name: "LimitRanger", Effect: v1alpha1.EffectMayMutate,
				Ops:     []v1alpha1.AdmissionOp{{Op: v1alpha1.OpSet, Path: []string{"spec", "containers", `[name="c"]`, "resources", "limits", "cpu"}, Value: "500m"}},
				Caveats: []string{"2 LimitRanges of namespace shop set defaults for this Pod, and the apiserver applies them in no fixed order"}},
			{Kind: v1alpha1.BuiltinPlugin, Name: "ServiceAccount", Effect: v1alpha1.EffectMutates,
				Ops: []v1alpha1.AdmissionOp{
					{Op: v1alpha1.OpSet, Path: []string{"spec", "serviceAccountName"}, Value: "default"},
					{Op: v1alpha1.OpAppend, Path: []string{"spec", "containers", `[name="c"]`, "volumeMounts"}, GenerateName: "kube-api-access-",
						Value: map[string]any{"name": "kube-api-access-", "mountPath": mountPath, "readOnly": true}},
					{Op: v1alpha1.OpAppend, Path: []string{"spec", "volumes"}, GenerateName: "kube-api-access-",
						Value: map[string]any{"name": "kube-api-access-", "emptyDir": map[string]any{}}},
				},
				Unknown: []pathlang.Path{
					pathlang.Path(fieldpath.MakePathOrDie("spec", "volumes", fieldpath.KeyByFields("name", "kube-api-access-"), "name")),
					pathlang.Path(fieldpath.MakePathOrDie("spec", "containers", fieldpath.KeyByFields("name", "c"), "volumeMounts", fieldpath.KeyByFields("mountPath", mountPath), "name")),
				}},
			{Kind: v1alpha1.BuiltinPlugin, Name: "Priority", Effect: v1alpha1.EffectMutates,
				Ops: []v1alpha1.AdmissionOp{{Op: v1alpha1.OpSet, Path: []string{"spec", "priority"}, Value: int64(0)}}},
			{Kind: v1alpha1.BuiltinPlugin, Name: "DefaultTolerationSeconds", Effect: v1alpha1.EffectMutates,
				Ops: []v1alpha1.AdmissionOp{{Op: v1alpha1.OpAppend, Path: []string{"spec", "tolerations"}, Atomic: true,
					Value: map[string]any{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": int64(300)}}}},
			{Kind: v1alpha1.BuiltinPlugin, Name: "RuntimeClass", Effect: v1alpha1.EffectMutates,
				Ops: []v1alpha1.AdmissionOp{{Op: v1alpha1.OpReplace, Path: []string{"spec", "tolerations"}, Atomic: true,
					Value: []any{map[string]any{"operator": "Exists"}}}}},
		}}
	target := remedy.Target{File: "pod.yaml", ResourceArg: "pod/web", Namespace: "shop", FieldManager: "ci"}
	opts := render.Options{Time: render.TimeRelative, Now: now, Palette: render.NewPalette(false)}
	golden(t, "admission-pod.golden", views(t, r, opts, target))
}

// views are the conflict view of r, then its diff's.
func views(t *testing.T, r *conflict.Simulation, opts render.Options, target remedy.Target) []byte {
	t.Helper()
	var buf bytes.Buffer
	render.ConflictExplanation(&buf, &r.ConflictReport, opts, target)
	buf.WriteString("---- diff\n")
	d, err := diff.Compute(r, diff.Options{Target: target})
	if err != nil {
		t.Fatal(err)
	}
	if err := render.Diff(&buf, d.Report, d.Live, d.Result, opts); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
