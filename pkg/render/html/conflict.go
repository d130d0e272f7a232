package html

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/remedy"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/render"
)

var conflictPage = pageOf("conflict.tmpl")

// Explained is one object's prediction, with the target its commands
// name (as explain-conflict's text view takes it).
type Explained struct {
	Report *v1alpha1.ConflictReport
	Target remedy.Target
}

// Conflicts writes explain-conflict's predictions (-o html): each object
// with its verdict, its conflicts first with both values and their
// owner, the ways to resolve them as commands and snippets to copy, what
// the apply removes, resets and leaves to others, and admission's
// verdicts; the text view's whole explanation folds below. failed are
// the objects that could not be predicted: the page says it is incomplete.
func Conflicts(w io.Writer, objs []Explained, failed ...error) error {
	out := make([]conflictObject, len(objs))
	for i, e := range objs {
		out[i] = conflictOf(e, fmt.Sprintf("o%d", i+1))
	}
	title := "What applying " + plural(len(out), "object") + " does"
	if len(out) == 1 {
		title = "What applying " + out[0].Name + " does"
	}
	return write(w, conflictPage, title, "explain-conflict", out, failed)
}

// conflictObject is one object's section.
type conflictObject struct {
	ID, Name string
	R        *v1alpha1.ConflictReport
	Verdict  string
	Class    string
	Notes    []note
	Resets   []string
	// Heading of the conflicts: conflicts, or the fields a force takes.
	Heading string
	Message []string
	Text    string
}

func conflictOf(e Explained, id string) conflictObject {
	r := e.Report
	o := conflictObject{ID: id, Name: r.Object.Display(), R: r, Verdict: render.ConflictVerdict(r), Class: conflictClass(r)}
	o.Notes = notes(render.ConflictNotes(r))
	for _, cr := range r.ControlledResets {
		o.Resets = append(o.Resets, render.ControlledReset(r.Object.Display(), cr, r.HelmUpgrade))
	}
	deniedForce := r.Force && r.Admission != nil && r.Admission.Denied != ""
	switch {
	case deniedForce:
		o.Heading = "Fields the force would take (admission refuses the apply: it takes none)"
	case r.Force:
		o.Heading = "Fields the force takes"
	default:
		o.Heading = "Conflicts"
	}
	if r.Message != "" && len(r.Conflicts) > 0 && !deniedForce {
		o.Message = strings.Split(r.Message, "\n")
	}
	var text strings.Builder
	render.ConflictExplanation(&text, r, render.Options{Time: render.TimeAbsolute, Now: time.Unix(0, 0), Palette: render.NewPalette(false)}, e.Target)
	o.Text = text.String()
	return o
}

// conflictClass is the verdict's class: an apply that fails, refused,
// denied or resetting what a controller sets is an error; one that forces
// or is not exact warns.
func conflictClass(r *v1alpha1.ConflictReport) string {
	switch {
	case r.Refused != nil, r.Admission != nil && r.Admission.Denied != "", r.Message != "", len(r.ControlledResets) > 0:
		return "err"
	case r.Force && len(r.Conflicts) > 0, len(r.Unchecked) > 0:
		return "warn"
	}
	return "ok"
}

// note is one line of notes, and whether it warns.
type note struct {
	Text string
	Bad  bool
}

func notes(lines []string, bad []bool) []note {
	out := make([]note, len(lines))
	for i, l := range lines {
		out[i] = note{Text: l, Bad: bad[i]}
	}
	return out
}
