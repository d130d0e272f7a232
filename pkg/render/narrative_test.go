package render_test

import (
	"bytes"
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/conflict"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/handover"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/migrate"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/remedy"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/render"
)

// Golden files for the three narrative views. The reports come from the
// real planners run over the captured fixtures (see testdata/README.md),
// so a change in a planner or in the view shows here.

func TestConflictExplanation(t *testing.T) {
	live := loadObject(t, "deployment.yaml")
	src, err := conflict.NewOfflineSource([]*unstructured.Unstructured{live}, nil)
	if err != nil {
		t.Fatal(err)
	}
	manifest := func(body map[string]any) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]any{"name": "web", "namespace": "shop"}}}
		for k, v := range body {
			u.Object[k] = v
		}
		return u
	}
	replicas := manifest(map[string]any{"spec": map[string]any{"replicas": int64(7)}})
	// Conflicts with kubectl scale, kubectl label and an applier of the
	// sidecar's image, whose item sits first in the manifest and second
	// in the live object.
	gitops := manifest(map[string]any{"spec": map[string]any{"replicas": int64(7),
		"template": map[string]any{"spec": map[string]any{"containers": []any{
			map[string]any{"name": "sidecar", "image": "busybox:1.37"}}}}}})
	gitops.SetLabels(map[string]string{"tier": "backend"})
	tests := []struct {
		name string
		obj  *unstructured.Unstructured
		opts conflict.Options
		ctx  remedy.Target
	}{
		{name: "conflict-replicas-context", obj: replicas, opts: conflict.Options{FieldManager: "ci"},
			ctx: remedy.Target{Kustomize: "overlays/prod", ClusterFlags: []string{"--context=prod", "--kubeconfig=/home/me/my configs/k.yaml"}}},
		{name: "conflict-replicas", obj: replicas, opts: conflict.Options{FieldManager: "ci"}},
		{name: "conflict-replicas-forced", obj: replicas, opts: conflict.Options{FieldManager: "ci", Force: true}},
		// The fixes in the tool's terms: --for from the field manager.
		{name: "conflict-argocd", obj: gitops, opts: conflict.Options{FieldManager: "argocd-controller"}},
		{name: "conflict-flux", obj: gitops, opts: conflict.Options{FieldManager: "kustomize-controller"}},
		{name: "conflict-helm", obj: gitops, opts: conflict.Options{FieldManager: "helm"}},
		{name: "conflict-none", obj: manifest(map[string]any{"metadata": map[string]any{"name": "web", "namespace": "shop",
			"labels": map[string]any{"app.kubernetes.io/name": "web"}}}), opts: conflict.Options{FieldManager: "ci"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := conflict.Explain(context.Background(), src, tt.obj, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			c := tt.ctx
			c.File, c.ResourceArg, c.Namespace, c.FieldManager = "ci.yaml", "deployment.v1.apps/web", "shop", tt.opts.FieldManager
			r.Resolutions = conflict.Resolutions(r, c)
			render.ConflictExplanation(&buf, &r.ConflictReport, render.Options{Time: render.TimeRelative, Now: now, Palette: render.NewPalette(false)}, c)
			golden(t, tt.name+".golden", buf.Bytes())
		})
	}
}

func TestHandoverNarrative(t *testing.T) {
	live := loadObject(t, "deployment.yaml")
	replicas := fieldpath.MakePathOrDie("spec", "replicas")
	tier := fieldpath.MakePathOrDie("metadata", "labels", "tier")
	secret := loadObject(t, "secret.yaml")
	password := fieldpath.MakePathOrDie("data", "password")
	annotations := fieldpath.MakePathOrDie("metadata", "annotations")
	tests := []struct {
		name string
		live *unstructured.Unstructured // default: deployment.yaml
		req  handover.Request
		done bool // the steps ran
	}{
		{name: "handover-to-controller-plan", req: handover.Request{From: "kubectl", FromSubresource: "scale", To: "kube-controller-manager", Mode: v1alpha1.HandoverController, Fields: []fieldpath.Path{replicas}}},
		{name: "handover-to-controller-held", req: handover.Request{From: "kubectl", FromSubresource: "scale", To: "kube-controller-manager", Mode: v1alpha1.HandoverController, Fields: []fieldpath.Path{replicas}}, done: true},
		{name: "handover-release", req: handover.Request{From: "kubectl-label", Mode: v1alpha1.HandoverRelease, Fields: []fieldpath.Path{tier}}, done: true},
		// The Secret's values, in the fields and in the last-applied
		// annotation under .metadata.annotations, are redacted.
		{name: "handover-release-client-side-apply", live: secret, req: handover.Request{From: "kubectl-client-side-apply", Mode: v1alpha1.HandoverRelease, Fields: []fieldpath.Path{password, annotations}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := live
			if tt.live != nil {
				obj = tt.live
			}
			r, err := handover.Plan(obj, tt.req, now)
			if err != nil {
				t.Fatal(err)
			}
			if tt.done {
				for i := range r.Steps {
					if r.Steps[i].Name != v1alpha1.StepWait {
						r.Steps[i].Status, r.Steps[i].ResourceVersion = v1alpha1.StepDone, "1234"
					}
				}
				r.Status = v1alpha1.HandoverCompleted
				if tt.req.Mode == v1alpha1.HandoverController {
					r.Status, r.Message = v1alpha1.HandoverHeld, `"kubectl-ssa-handover" holds the fields until "kube-controller-manager" writes them`
				}
				r.After = r.Before
			}
			handover.RedactSecrets(r)
			var buf bytes.Buffer
			render.HandoverNarrative(&buf, r, render.Options{Time: render.TimeRelative, Now: now, Palette: render.NewPalette(false)})
			golden(t, tt.name+".golden", buf.Bytes())
		})
	}
}

func TestMigrationReport(t *testing.T) {
	secret := loadObject(t, "secret.yaml")
	obj := migrate.Object{Ref: ownership.RefOf(secret), ManagedFields: secret.GetManagedFields(), Annotations: secret.GetAnnotations(), Content: secret.Object}
	p, err := migrate.MakePlan(obj, migrate.Options{Mode: v1alpha1.MigrateCSA, Target: "kubectl", Now: now})
	if err != nil {
		t.Fatal(err)
	}
	res := v1alpha1.ObjectResult{Object: obj.Ref, Result: v1alpha1.ResultWouldMigrate, Changes: p.Changes, Findings: p.Findings, Before: p.Before, After: p.After}
	tests := []struct {
		name string
		r    v1alpha1.MigrationReport
	}{
		{name: "migrate-dry-run", r: v1alpha1.MigrationReport{Mode: v1alpha1.MigrateCSA, FieldManager: "kubectl", DryRun: v1alpha1.DryRunClient,
			Summary: v1alpha1.MigrationSummary{Scanned: 3, Migrated: 1, Unchanged: 2}, Objects: []v1alpha1.ObjectResult{res}}},
		{name: "migrate-partial", r: v1alpha1.MigrationReport{Mode: v1alpha1.MigrateCSA, FieldManager: "kubectl", DryRun: v1alpha1.DryRunNone, BackupDir: "/backups/migrate-1",
			Summary:  v1alpha1.MigrationSummary{Scanned: 3, Migrated: 1, Unchanged: 1, Failed: 1},
			Unlisted: []string{"secrets: secrets is forbidden: User \"dev\" cannot list resource \"secrets\""},
			Objects: []v1alpha1.ObjectResult{
				{Object: obj.Ref, Result: v1alpha1.ResultMigrated, Changes: p.Changes},
				{Object: v1alpha1.ObjectRef{Kind: "ConfigMap", Namespace: "shop", Name: "settings"}, Result: v1alpha1.ResultFailed, Reason: "the object kept changing while this ran (10 conflicts in a row): nothing more was written; run the command again"},
			}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			render.MigrationReport(&buf, &tt.r, migrate.EntryChanges(&tt.r), render.NewPalette(false))
			golden(t, tt.name+".golden", buf.Bytes())
		})
	}
}
