package html

import (
	"fmt"
	"io"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/render"
)

var diffPage = pageOf("diff.tmpl")

// Diffed is one object's diff: its report, and the ownership of the
// object before (nil: the apply creates it) and after the apply, as
// package diff computes them with it.
type Diffed struct {
	Report       *v1alpha1.DiffReport
	Live, Result *ownership.Report
}

// Diffs writes diff's reports (-o html): each object with its conflicts
// and their ways out first, the unified diff with every changed line's
// owners before and after, what other managers keep and why, and
// admission's verdicts. failed are the objects that could not be
// predicted: the page says it is incomplete.
func Diffs(w io.Writer, objs []Diffed, failed ...error) error {
	out := make([]diffObject, len(objs))
	for i, d := range objs {
		r := d.Report
		out[i] = diffObject{
			ID: fmt.Sprintf("o%d", i+1), Name: r.Object.Display(), R: r,
			Headline: render.DiffHeadline(r), Counts: render.DiffCounts(r), Resets: render.DiffResetLines(r),
			Hunks: render.DiffHunks(r, d.Live, d.Result), Notes: notes(render.DiffNotes(r)),
			Fails: len(r.Conflicts) > 0 && !r.Force,
		}
		for _, s := range r.Stays {
			out[i].Stays = append(out[i].Stays, stay{Stay: s, Why: render.StayWhy(r.FieldManager, s)})
		}
	}
	title := "What applying " + plural(len(out), "object") + " changes"
	if len(out) == 1 {
		title = "What applying " + out[0].Name + " changes"
	}
	return write(w, diffPage, title, "diff", out, failed)
}

// diffObject is one object's section.
type diffObject struct {
	ID, Name, Headline, Counts string
	R                          *v1alpha1.DiffReport
	Resets                     []string
	Hunks                      []render.DiffHunk
	Stays                      []stay
	Notes                      []note
	// Fails: the apply as asked fails on its conflicts; the diff is the
	// forced apply's.
	Fails bool
}

// stay is what a manager keeps, and what its command does or why it has
// none.
type stay struct {
	v1alpha1.Stay
	Why string
}

// op is a diff line's sign, class and what a screen reader says of it.
func op(b byte) [3]string {
	switch b {
	case '-':
		return [3]string{"-", "del", "removed"}
	case '+':
		return [3]string{"+", "add", "added"}
	}
	return [3]string{" ", "same", "unchanged"}
}
