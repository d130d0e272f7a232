package render_test

import (
	"bytes"
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/admission"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/conflict"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/diff"
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
			var buf bytes.Buffer
			render.ConflictExplanation(&buf, r, opts, target)
			buf.WriteString("---- diff\n")
			d, err := diff.Compute(r, r, diff.Options{Target: target})
			if err != nil {
				t.Fatal(err)
			}
			if err := render.Diff(&buf, d, opts, target, false); err != nil {
				t.Fatal(err)
			}
			golden(t, c.name+".golden", buf.Bytes())
		})
	}
}
