package render

import (
	"fmt"
	"strings"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
)

// The sentences of the text views that other views (the HTML page) say
// too, without colour: each is worded in one place.

// plain is the palette of the sentences other views say: no colour.
var plain = NewPalette(false)

// ConflictVerdict is explain-conflict's verdict on one apply (refused,
// denied, created, conflicts, forced, resets, not exact, or success).
func ConflictVerdict(r *v1alpha1.ConflictReport) string { return conflictVerdict(r, plain) }

// AdmissionLines say what admission does to an apply, a line a step; bad
// tells the lines that make the prediction not exact. check is how the
// user has the server's dry run check it ("": it was checked).
func AdmissionLines(a *v1alpha1.AdmissionReport, check string) (lines []string, bad []bool) {
	return admissionLines(a, check)
}

// DiffHeadline is diff's header line: the object, the write, who makes
// it, and what it changes.
func DiffHeadline(r *v1alpha1.DiffReport) string {
	return fmt.Sprintf("%s (%s): %s by %s", Escape(r.Object.Display()), Escape(r.Object.APIVersion), diffWrite(r), Escape(r.FieldManager)) + changesSummary(r)
}

// DiffResetLines are diff's header lines of the resets a controller
// undoes (with their remedies) and of the way a Helm upgrade writes.
func DiffResetLines(r *v1alpha1.DiffReport) []string {
	lines := diffResetLines(r, plain)
	for i, l := range lines {
		lines[i] = strings.TrimSpace(strings.TrimPrefix(l, "#"))
	}
	return lines
}

// StayWhy says what following a stay's command does, or why it has none.
func StayWhy(fieldManager string, s v1alpha1.Stay) string {
	switch {
	case len(s.Command) > 0:
		return fmt.Sprintf("to make %s own them, so that its next apply removes them:", Escape(fieldManager))
	case s.Note != "":
		return ""
	case s.Manager.Subresource != "":
		return fmt.Sprintf("written through /%s: hand them over with kubectl ssa handover, or leave them to that writer", Escape(string(s.Manager.Subresource)))
	default:
		return "a controller writes them; it keeps them"
	}
}

// ResetText says what a reset field becomes, and whether that changes it.
func ResetText(rs v1alpha1.Reset) string { return resetText(rs) }

// ValueText is a value as the views quote it: compact JSON, cut at 200
// characters, "(not set)" for none.
func ValueText(v any) string { return valueText(v) }
