package html_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/audit"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/conflict"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/diff"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/remedy"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/render/html"
)

// manifest is a Deployment web of namespace shop, applied with body.
func manifest(body map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web", "namespace": "shop"}}}
	for k, v := range body {
		u.Object[k] = v
	}
	return u
}

// gitops conflicts with kubectl scale, kubectl label and an applier of
// the sidecar's image, and drops what it no longer sets.
func gitops() *unstructured.Unstructured {
	m := manifest(map[string]any{"spec": map[string]any{"replicas": int64(7),
		"template": map[string]any{"spec": map[string]any{"containers": []any{
			map[string]any{"name": "sidecar", "image": "busybox:1.37"}}}}}})
	m.SetLabels(map[string]string{"tier": "backend"})
	return m
}

// explain predicts the apply of applied to live, as explain-conflict
// does, with its resolutions.
func explain(t *testing.T, live, applied *unstructured.Unstructured, opts conflict.Options) (*conflict.Simulation, remedy.Target) {
	t.Helper()
	src, err := conflict.NewOfflineSource([]*unstructured.Unstructured{live}, nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := conflict.Explain(context.Background(), src, applied, opts)
	if err != nil {
		t.Fatal(err)
	}
	c := remedy.Target{File: "ci.yaml", ResourceArg: "deployment.v1.apps/web", Namespace: "shop", FieldManager: opts.FieldManager}
	r.Resolutions = conflict.Resolutions(r, c)
	return r, c
}

func TestConflicts(t *testing.T) {
	live := loadObject(t, "deployment.yaml")
	tests := []struct {
		name string
		obj  *unstructured.Unstructured
		opts conflict.Options
	}{
		{name: "conflict-argocd", obj: gitops(), opts: conflict.Options{FieldManager: "argocd-controller"}},
		{name: "conflict-forced", obj: gitops(), opts: conflict.Options{FieldManager: "ci", Force: true}},
		{name: "conflict-none", obj: manifest(map[string]any{"metadata": map[string]any{"name": "web", "namespace": "shop",
			"labels": map[string]any{"app.kubernetes.io/name": "web"}}}), opts: conflict.Options{FieldManager: "platform"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, c := explain(t, live, tt.obj, tt.opts)
			var buf bytes.Buffer
			if err := html.Conflicts(&buf, []html.Explained{{Report: &r.ConflictReport, Target: c}}); err != nil {
				t.Fatal(err)
			}
			checkPage(t, buf.String())
			golden(t, tt.name+".html", buf.Bytes())
		})
	}
}

func diffOf(t *testing.T, live, applied *unstructured.Unstructured, manager string) html.Diffed {
	t.Helper()
	r, c := explain(t, live, applied, conflict.Options{FieldManager: manager, AlsoForced: true})
	d, err := diff.Compute(r, diff.Options{Target: c})
	if err != nil {
		t.Fatal(err)
	}
	// The apply's own entry is stamped with the time the field manager
	// ran: the page shows the injected clock's instead.
	at := func(o *v1alpha1.Owner) {
		if o.Time != nil && o.Time.After(clock.Time) {
			o.Time = &clock
		}
	}
	for i := range d.Result.Owners {
		at(&d.Result.Owners[i])
	}
	for i := range d.Report.Changes {
		for j := range d.Report.Changes[i].OwnersAfter {
			at(&d.Report.Changes[i].OwnersAfter[j])
		}
	}
	for i := range d.Report.Stays {
		at(&d.Report.Stays[i].Manager)
	}
	return html.Diffed{Report: d.Report, Live: d.Live, Result: d.Result}
}

// clock is the injected clock: a minute after the last write in the
// fixtures.
var clock = metav1.NewTime(time.Date(2026, 11, 22, 0, 12, 52, 0, time.UTC))

func TestDiffs(t *testing.T) {
	live := loadObject(t, "deployment.yaml")
	tests := []struct {
		name string
		objs []html.Diffed
	}{
		{name: "diff-conflicts", objs: []html.Diffed{diffOf(t, live, gitops(), "argocd-controller")}},
		// The platform's applier drops the sidecar and the label: the diff
		// removes what it owned alone, and the others' fields stay.
		{name: "diff-stays", objs: []html.Diffed{diffOf(t, live, manifest(map[string]any{"spec": map[string]any{
			"selector": map[string]any{"matchLabels": map[string]any{"app.kubernetes.io/name": "web"}},
			"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"app.kubernetes.io/name": "web"}},
				"spec": map[string]any{"containers": []any{map[string]any{"name": "web", "image": "nginx:1.28"}}}}}}), "platform")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := html.Diffs(&buf, tt.objs); err != nil {
				t.Fatal(err)
			}
			checkPage(t, buf.String())
			golden(t, tt.name+".html", buf.Bytes())
		})
	}
}

// auditOf audits objects as if read from clusters.
func auditOf(t *testing.T, objs []*unstructured.Unstructured, clusters ...string) *v1alpha1.AuditReport {
	t.Helper()
	var findings []v1alpha1.Finding
	scanned := 0
	for _, c := range clusters {
		for _, u := range objs {
			obj := audit.Object{Ref: ownership.RefOf(u), ManagedFields: u.GetManagedFields(), Annotations: u.GetAnnotations()}
			findings = append(findings, audit.Check(obj, audit.Options{Cluster: c, ClusterFlags: []string{"--context=" + c}, LastAppliedThreshold: audit.DefaultLastAppliedThreshold})...)
			scanned++
		}
	}
	return audit.NewReport(clusters, scanned, findings, nil)
}

func fixtures(t *testing.T) []*unstructured.Unstructured {
	return []*unstructured.Unstructured{loadObject(t, "deployment.yaml"), loadObject(t, "secret.yaml"), loadObject(t, "configmap.yaml")}
}

func TestAudit(t *testing.T) {
	tests := []struct {
		name   string
		report *v1alpha1.AuditReport
	}{
		{name: "audit-clusters", report: auditOf(t, fixtures(t), "prod", "staging")},
		{name: "audit-none", report: auditOf(t, nil)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := html.Audit(&buf, []*v1alpha1.AuditReport{tt.report}); err != nil {
				t.Fatal(err)
			}
			checkPage(t, buf.String())
			golden(t, tt.name+".html", buf.Bytes())
		})
	}
}

// Hostile text in a label, an annotation and a manager's name stays text
// on every page, and a Secret's values are on none.
func TestPagesHostile(t *testing.T) {
	evil := hostileObject(t)
	applied := gitops()
	applied.SetAnnotations(map[string]string{"example.com/note": hostile + " v2"})
	r, c := explain(t, evil, applied, conflict.Options{FieldManager: "argocd-controller"})
	pages := map[string]func(*bytes.Buffer) error{
		"explain-conflict": func(b *bytes.Buffer) error {
			return html.Conflicts(b, []html.Explained{{Report: &r.ConflictReport, Target: c}})
		},
		"diff": func(b *bytes.Buffer) error {
			return html.Diffs(b, []html.Diffed{diffOf(t, evil, applied, "argocd-controller")})
		},
		"audit": func(b *bytes.Buffer) error {
			return html.Audit(b, []*v1alpha1.AuditReport{auditOf(t, append(fixtures(t), evil), hostile)})
		},
	}
	for name, page := range pages {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := page(&buf); err != nil {
				t.Fatal(err)
			}
			checkPage(t, buf.String())
			if !strings.Contains(buf.String(), "&lt;img src=x onerror=alert(1)&gt;") {
				t.Error("the hostile text is not on the page as text")
			}
			for _, leak := range []string{"aHVudGVyMg", "hunter2"} {
				if strings.Contains(buf.String(), leak) {
					t.Errorf("a Secret's value (%s) is on the page", leak)
				}
			}
		})
	}
}
