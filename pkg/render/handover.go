package render

import (
	"fmt"
	"io"
	"strings"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
)

// HandoverNarrative tells a handover step by step.
func HandoverNarrative(w io.Writer, r *v1alpha1.HandoverReport, o Options) {
	w = Terminal(w) // the one way out: see terminal.go
	p := o.Palette
	obj := Escape(r.Object.Display())
	from := fmt.Sprintf("%q", r.From)
	switch r.FromSubresource {
	case "":
	case "-", "none":
		from += " (the main resource)"
	default:
		from += " (/" + r.FromSubresource + ")"
	}
	var what string
	switch r.Mode {
	case v1alpha1.HandoverRelease:
		what = from + " releases fields"
	case v1alpha1.HandoverController:
		what = fmt.Sprintf("hand fields from %s to the controller %q", from, r.To)
	default:
		what = fmt.Sprintf("hand fields from %s to %q", from, r.To)
	}
	fmt.Fprintln(w, p.Bold("# "+obj+": "+Escape(what)))
	for _, warn := range r.Warnings {
		fmt.Fprintln(w, p.Yellow("  warning: "+Escape(warn)))
	}
	if len(r.Before) > 0 {
		fmt.Fprintln(w, "Before:")
		writeStates(w, r.Before, o)
	}
	if len(r.Steps) > 0 {
		fmt.Fprintln(w, "Steps:")
		for i, s := range r.Steps {
			status := string(s.Status)
			switch s.Status {
			case v1alpha1.StepDone:
				status = p.Green(status)
				if s.ResourceVersion != "" {
					status += p.Dim(" (resourceVersion " + s.ResourceVersion + ")")
				}
			case v1alpha1.StepFailed, v1alpha1.StepTimedOut:
				status = p.Red(status)
			default:
				status = p.Yellow(status)
			}
			fmt.Fprintf(w, "  %d. %-8s %s: %s\n", i+1, s.Name, Escape(s.Description), status)
			shown := make([]string, len(s.Paths))
			for j, path := range s.Paths {
				shown[j] = path.String()
			}
			fmt.Fprintf(w, "     %s\n", p.Dim("fields: "+Escape(strings.Join(shown, ", "))))
			if e := s.LastApplied; e != nil {
				removed := make([]string, len(e.Removed))
				for j, path := range e.Removed {
					removed[j] = path.String()
				}
				what := "removes the annotation " + e.Annotation
				if !e.Deleted {
					what = "takes " + strings.Join(removed, ", ") + " out of the annotation " + e.Annotation
				}
				fmt.Fprintf(w, "     %s\n", Escape("last-applied: "+what+fmt.Sprintf(" (written as %q, its owner)", e.Manager)))
			}
		}
	}
	if len(r.After) > 0 && r.Status != v1alpha1.HandoverPlanned {
		fmt.Fprintln(w, "After:")
		writeStates(w, r.After, o)
	}
	if len(r.Orphaned) > 0 {
		fmt.Fprintln(w, p.Yellow("Owned by nobody after the release (they stay as they are; no apply will remove them):"))
		for _, f := range r.Orphaned {
			fmt.Fprintf(w, "  %s\n", Escape(f.String()))
		}
	}
	if len(r.AppliersOnly) > 0 {
		fmt.Fprintln(w, "Owned only by appliers after the release (their next apply without these fields removes them):")
		for _, f := range r.AppliersOnly {
			fmt.Fprintf(w, "  %s\n", Escape(f.String()))
		}
	}
	status := string(r.Status)
	switch r.Status {
	case v1alpha1.HandoverCompleted, v1alpha1.HandoverAlreadyComplete, v1alpha1.HandoverHandedOver:
		status = p.Green(status)
	case v1alpha1.HandoverHeld, v1alpha1.HandoverPlanned:
		status = p.Yellow(status)
	default:
		status = p.Red(status)
	}
	line := "Result: " + status
	if r.Message != "" {
		line += ": " + Escape(r.Message)
	}
	fmt.Fprintln(w, line)
	if r.Next != "" {
		fmt.Fprintln(w, p.Bold("Next: ")+Escape(r.Next))
	}
}

func writeStates(w io.Writer, states []v1alpha1.FieldState, o Options) {
	for _, s := range states {
		owners := "nobody"
		if len(s.Owners) > 0 {
			owners = o.colorOwners(s.Owners)
		}
		value := valueText(s.Value)
		if len(s.StoredAs) > 0 && s.Value == nil {
			value = "(write-only: the apiserver stores it as " + Escape(s.StoredAs.String()) + ")"
		}
		fmt.Fprintf(w, "  %s = %s  owned by %s\n", Escape(s.Path.String()), value, owners)
	}
}

// HandoverProgress prints one line as a step of a handover finishes, for
// a terminal: the object, the step, its manager and its status, escaped.
func HandoverProgress(w io.Writer, object string, s v1alpha1.HandoverStep) {
	fmt.Fprintln(Terminal(w), Escape(object)+": "+string(s.Name)+" ("+Escape(s.Manager)+") "+string(s.Status))
}
