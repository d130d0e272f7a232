package render_test

import (
	"bytes"
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/admission"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/conflict"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/diff"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/pathlang"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/remedy"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/render"
)

// admissionOfEveryKind is an admission report with a step of each effect,
// a caveat and a reason only a line of its own says.
func admissionOfEveryKind() *admission.Report {
	return &admission.Report{
		Exact:    false,
		Reasons:  []string{"admission is not fully known: could not list mutatingwebhookconfigurations of admissionregistration.k8s.io (forbidden: check with kubectl auth can-i list mutatingwebhookconfigurations.admissionregistration.k8s.io)"},
		Warnings: []string{`would violate PodSecurity "restricted:latest": runAsNonRoot != true`},
		Steps: []admission.Step{
			{Kind: admission.Builtin, Name: "DefaultStorageClass", Effect: admission.Mutates, Ops: []admission.Op{{Op: admission.OpSet, Path: []string{"spec", "storageClassName"}, Value: "standard"}}},
			{Kind: admission.Builtin, Name: "StorageObjectInUseProtection", Effect: admission.Mutates, Ops: []admission.Op{{Op: admission.OpAppend, Path: []string{"metadata", "finalizers"}, Value: "kubernetes.io/pvc-protection"}}},
			{Kind: admission.MutatingAdmissionPolicy, Name: "team (binding team)", Effect: admission.MayMutate},
			{Kind: admission.MutatingWebhook, Name: "hooks/inject.example.com", Effect: admission.MayMutate, Caveats: []string{"its 1 matchConditions (CEL) were not evaluated: it may not be called"}},
			{Kind: admission.Builtin, Name: "PodSecurity", Effect: admission.Warns, Message: `would violate PodSecurity "restricted:latest": runAsNonRoot != true`},
			{Kind: admission.ValidatingAdmissionPolicy, Name: "max-replicas (binding max-replicas)", Effect: admission.MayDeny},
			{Kind: admission.ValidatingAdmissionPolicy, Name: "labels (binding warn)", Effect: admission.MayWarn},
			{Kind: admission.ValidatingAdmissionPolicy, Name: "labels (binding audit)", Effect: admission.Audits},
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
	manifest := &unstructured.Unstructured{Object: map[string]interface{}{"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]interface{}{"name": "web", "namespace": "shop", "labels": map[string]interface{}{"app.kubernetes.io/name": "web"}}}}
	opts := render.Options{Time: render.TimeRelative, Now: now, Palette: render.NewPalette(false)}
	target := remedy.Target{File: "ci.yaml", ResourceArg: "deployment.v1.apps/web", Namespace: "shop", FieldManager: "ci"}
	for _, c := range []struct {
		name string
		adm  func() *admission.Report
	}{
		{"admission-inexact", admissionOfEveryKind},
		{"admission-denied", func() *admission.Report {
			return &admission.Report{Exact: true, Reasons: []string{}, Warnings: []string{},
				Denied: `pods "host" is forbidden: violates PodSecurity "baseline:latest": host namespaces (hostNetwork=true)`,
				Steps: []admission.Step{{Kind: admission.Builtin, Name: "PodSecurity", Effect: admission.Denies,
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
	manifest := &unstructured.Unstructured{Object: map[string]interface{}{"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]interface{}{"name": "web", "namespace": "shop"},
		"spec": map[string]interface{}{
			"tolerations": []interface{}{map[string]interface{}{"key": "gpu", "operator": "Exists"}},
			"containers":  []interface{}{map[string]interface{}{"name": "c", "image": "nginx"}}}}}
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
	r.Admission = &admission.Report{Exact: false, Reasons: []string{"admission plugin LimitRanger: 2 LimitRanges of namespace shop set defaults for this Pod, and the apiserver applies them in no fixed order"}, Warnings: []string{},
		Steps: []admission.Step{
			{Kind: admission.Builtin, Name: "LimitRanger", Effect: admission.MayMutate,
				Ops:     []admission.Op{{Op: admission.OpSet, Path: []string{"spec", "containers", `[name="c"]`, "resources", "limits", "cpu"}, Value: "500m"}},
				Caveats: []string{"2 LimitRanges of namespace shop set defaults for this Pod, and the apiserver applies them in no fixed order"}},
			{Kind: admission.Builtin, Name: "ServiceAccount", Effect: admission.Mutates,
				Ops: []admission.Op{
					{Op: admission.OpSet, Path: []string{"spec", "serviceAccountName"}, Value: "default"},
					{Op: admission.OpAppend, Path: []string{"spec", "containers", `[name="c"]`, "volumeMounts"}, GenerateName: "kube-api-access-",
						Value: map[string]interface{}{"name": "kube-api-access-", "mountPath": mountPath, "readOnly": true}},
					{Op: admission.OpAppend, Path: []string{"spec", "volumes"}, GenerateName: "kube-api-access-",
						Value: map[string]interface{}{"name": "kube-api-access-", "emptyDir": map[string]interface{}{}}},
				},
				Unknown: []pathlang.Path{
					pathlang.Path(fieldpath.MakePathOrDie("spec", "volumes", fieldpath.KeyByFields("name", "kube-api-access-"), "name")),
					pathlang.Path(fieldpath.MakePathOrDie("spec", "containers", fieldpath.KeyByFields("name", "c"), "volumeMounts", fieldpath.KeyByFields("mountPath", mountPath), "name")),
				}},
			{Kind: admission.Builtin, Name: "Priority", Effect: admission.Mutates,
				Ops: []admission.Op{{Op: admission.OpSet, Path: []string{"spec", "priority"}, Value: int64(0)}}},
			{Kind: admission.Builtin, Name: "DefaultTolerationSeconds", Effect: admission.Mutates,
				Ops: []admission.Op{{Op: admission.OpAppend, Path: []string{"spec", "tolerations"}, Atomic: true,
					Value: map[string]interface{}{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": int64(300)}}}},
			{Kind: admission.Builtin, Name: "RuntimeClass", Effect: admission.Mutates,
				Ops: []admission.Op{{Op: admission.OpReplace, Path: []string{"spec", "tolerations"}, Atomic: true,
					Value: []interface{}{map[string]interface{}{"operator": "Exists"}}}}},
		}}
	target := remedy.Target{File: "pod.yaml", ResourceArg: "pod/web", Namespace: "shop", FieldManager: "ci"}
	opts := render.Options{Time: render.TimeRelative, Now: now, Palette: render.NewPalette(false)}
	golden(t, "admission-pod.golden", views(t, r, opts, target))
}

// views are the conflict view of r, then its diff's.
func views(t *testing.T, r *conflict.Simulation, opts render.Options, target remedy.Target) []byte {
	t.Helper()
	var buf bytes.Buffer
	render.ConflictExplanation(&buf, &r.Report, opts, target)
	buf.WriteString("---- diff\n")
	d, err := diff.Compute(r, diff.Options{Target: target})
	if err != nil {
		t.Fatal(err)
	}
	if err := render.Diff(&buf, d.Report, d.Live, d.Result, opts, target); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
