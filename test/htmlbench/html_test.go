// Package htmlbench measures the -o html pages in Chromium: how long a
// page takes to load and paint, and how long the audit's filters take on
// a fleet's page. bench/html.sh runs it; the numbers are in
// docs/performance.md.
package htmlbench

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/kubectl-ssa/kubectl-ssa/internal/benchdata"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/audit"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/render/html"
	"github.com/kubectl-ssa/kubectl-ssa/test/browser"
)

// whoOwnsPage is who-owns' page of a Deployment of n containers (three
// appliers and the status writer, as benchdata writes it).
func whoOwnsPage(b *testing.B, n int) []byte {
	r, err := ownership.Analyze(benchdata.Deployment(n), ownership.Options{})
	if err != nil {
		b.Fatal(err)
	}
	var buf bytes.Buffer
	if err := html.WhoOwns(&buf, []*ownership.Report{r}, html.OwnersOptions{}); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes()
}

// auditPage is audit's page of n Deployments in 50 namespaces, each with
// the findings of benchdata's (two appliers share the images; kubectl
// scaled it).
func auditPage(b *testing.B, n int) []byte {
	var findings []v1alpha1.Finding
	for i := 0; i < n; i++ {
		u := benchdata.Deployment(2)
		u.SetName(fmt.Sprintf("web-%05d", i))
		u.SetNamespace(fmt.Sprintf("team-%02d", i%50))
		obj := audit.Object{Ref: ownership.RefOf(u), ManagedFields: u.GetManagedFields(), Annotations: u.GetAnnotations()}
		findings = append(findings, audit.Check(obj, audit.Options{Cluster: "prod", ClusterFlags: []string{"--context=prod"}, LastAppliedThreshold: audit.DefaultLastAppliedThreshold})...)
	}
	var buf bytes.Buffer
	if err := html.Audit(&buf, []*v1alpha1.AuditReport{audit.NewReport([]string{"prod"}, n, findings, nil)}); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes()
}

// loadTime is the navigation's timing of the page: until its load event
// ended, and until its first paint with content (ms).
const loadTime = `(function(){var n=performance.getEntriesByType("navigation")[0];var p=performance.getEntriesByName("first-contentful-paint")[0];return [n.loadEventEnd,p?p.startTime:-1]})()`

// filterTime is what unticking, then ticking again, the first code takes
// with the layout it forces (ms).
const filterTime = `(function(){var i=document.querySelector("input[name=code]");var t=performance.now();i.click();document.body.offsetHeight;i.click();document.body.offsetHeight;return performance.now()-t})()`

func BenchmarkPages(b *testing.B) {
	ctx := browser.Start(b)
	pages := []struct {
		name   string
		page   func(*testing.B) []byte
		filter bool
	}{
		{name: "who-owns-50-containers", page: func(b *testing.B) []byte { return whoOwnsPage(b, 50) }},
		{name: "audit-10000-objects", page: func(b *testing.B) []byte { return auditPage(b, 10000) }, filter: true},
	}
	for _, p := range pages {
		b.Run(p.name, func(b *testing.B) {
			file := filepath.Join(b.TempDir(), p.name+".html")
			page := p.page(b)
			if err := os.WriteFile(file, page, 0o644); err != nil {
				b.Fatal(err)
			}
			var load, paint, filter float64
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				tab, cancel, err := browser.Open(ctx, file)
				if err != nil {
					b.Fatal(err)
				}
				t, err := browser.Eval[[]float64](tab, loadTime)
				if err != nil {
					b.Fatal(err)
				}
				load, paint = load+t[0], paint+t[1]
				if p.filter {
					f, err := browser.Eval[float64](tab, filterTime)
					if err != nil {
						b.Fatal(err)
					}
					filter += f
				}
				cancel()
			}
			b.ReportMetric(float64(len(page)), "bytes")
			b.ReportMetric(load/float64(b.N), "ms-load")
			b.ReportMetric(paint/float64(b.N), "ms-first-paint")
			if p.filter {
				b.ReportMetric(filter/float64(b.N), "ms-filter")
			}
		})
	}
}
