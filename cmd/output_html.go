package cmd

import (
	"io"

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
	return html.WhoOwns(w, reps, html.OwnersOptions{Empty: o.view.Empty})
}
