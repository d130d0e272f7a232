package cmd

import (
	"io"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/diff"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/render/html"
)

// viewHTML is -o html: every report of the run as one self-contained page
// (package html), written at the end.
const viewHTML = "html"

// whoOwnsPage is who-owns' page of the objects shown.
func (o *whoOwnsOptions) whoOwnsPage(w io.Writer, shown []ownersShown) error {
	reps := make([]*ownership.Report, len(shown))
	for i, s := range shown {
		reps[i] = s.rep
	}
	return html.WhoOwns(w, reps, html.OwnersOptions{Empty: o.view.Empty, Unmatched: o.unmatched}, o.failed...)
}

// explainPage is explain-conflict's page of the objects predicted.
func (o *explainOptions) explainPage(w io.Writer, objs []explained) error {
	out := make([]html.Explained, len(objs))
	for i, e := range objs {
		out[i] = html.Explained{Report: e.report, Target: o.target(e.source, e.report)}
	}
	return html.Conflicts(w, out, o.failed...)
}

// diffPage is diff's page of the objects diffed.
func (o *diffOptions) diffPage(w io.Writer, objs []*diff.Computed) error {
	out := make([]html.Diffed, len(objs))
	for i, d := range objs {
		out[i] = html.Diffed{Report: d.Report, Live: d.Live, Result: d.Result}
	}
	return html.Diffs(w, out, o.failed...)
}

// auditPage is audit's page of its report.
func (o *auditOptions) auditPage(w io.Writer, reports []*v1alpha1.AuditReport) error {
	return html.Audit(w, reports, o.failed...)
}
