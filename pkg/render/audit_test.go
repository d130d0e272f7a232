package render_test

import (
	"bytes"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/audit"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/pathlang"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/render"
)

// auditOf audits the fixtures as if read from clusters.
func auditOf(t *testing.T, clusters ...string) *v1alpha1.AuditReport {
	t.Helper()
	var findings []v1alpha1.Finding
	scanned := 0
	for _, c := range clusters {
		for _, fixture := range []string{"deployment.yaml", "secret.yaml", "configmap.yaml"} {
			u := loadObject(t, fixture)
			obj := audit.Object{Ref: ownership.RefOf(u), ManagedFields: u.GetManagedFields(), Annotations: u.GetAnnotations()}
			findings = append(findings, audit.Check(obj, audit.Options{Cluster: c, ClusterFlags: []string{"--context=" + c}, LastAppliedThreshold: audit.DefaultLastAppliedThreshold})...)
			scanned++
		}
	}
	return audit.NewReport(clusters, scanned, findings, nil)
}

func TestAuditReport(t *testing.T) {
	tests := []struct {
		name     string
		clusters []string
		opts     render.AuditOptions
	}{
		{name: "audit-table", clusters: []string{"prod"}},
		{name: "audit-wide", clusters: []string{"prod"}, opts: render.AuditOptions{Wide: true}},
		{name: "audit-clusters", clusters: []string{"prod", "staging"}, opts: render.AuditOptions{Clusters: true}},
		{name: "audit-none", clusters: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := render.AuditReport(&buf, auditOf(t, tt.clusters...), tt.opts, render.NewPalette(false)); err != nil {
				t.Fatal(err)
			}
			golden(t, tt.name+".golden", buf.Bytes())
		})
	}
}

func TestFightLine(t *testing.T) {
	since := time.Date(2026, 11, 23, 12, 0, 1, 0, time.UTC)
	f := v1alpha1.Fight{TypeMeta: v1alpha1.NewTypeMeta(v1alpha1.FightKind), Object: v1alpha1.ObjectRef{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "shop", Name: "web"},
		Managers: []v1alpha1.Writer{
			{Owner: v1alpha1.Owner{Manager: "argocd-controller", Operation: "Apply"}, Value: int64(2)},
			{Owner: v1alpha1.Owner{Manager: "hpa\x1b[31m", Operation: "Update", Subresource: "scale"}, Value: int64(5)},
		},
		Values: []any{int64(2), int64(5)}, Flips: 4, Since: metav1.NewTime(since), Last: metav1.NewTime(since.Add(12 * time.Second)), PerMinute: 20,
	}
	p, err := pathlang.ParsePath(".spec.replicas")
	if err != nil {
		t.Fatal(err)
	}
	f.Path = pathlang.Path(p)
	var buf bytes.Buffer
	if err := render.FightLine(&buf, f, render.NewPalette(false)); err != nil {
		t.Fatal(err)
	}
	golden(t, "fight-line.golden", buf.Bytes())
	// The JSON line scripts read (watch -o json): one document a line,
	// its shape pinned.
	buf.Reset()
	if err := render.FightJSON(&buf, f); err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(buf.Bytes(), []byte("\n")); n != 1 {
		t.Errorf("%d lines, want one", n)
	}
	golden(t, "fight-json.golden", buf.Bytes())
}
