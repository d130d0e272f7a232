package render

import (
	"fmt"
	"io"
	"strings"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/pathlang"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/remedy"
)

// ControlledReset says in one sentence what a controlled reset does to
// the object name: the write, the field, its value before and after, who
// sets it back.
func ControlledReset(name string, cr v1alpha1.ControlledReset, h *v1alpha1.HelmUpgrade) string {
	write := "the apply"
	if h != nil {
		write = "helm upgrade (" + string(h.Mode) + ", --server-side=" + h.Flag + ")"
	}
	what := "removes " + cr.Path.String()
	switch {
	case cr.Set:
		what = fmt.Sprintf("sets %s to %s", cr.Path, valueText(cr.Value))
	case !cr.Removed:
		what = fmt.Sprintf("resets %s to %s", cr.Path, valueText(cr.Value))
	}
	if cr.Was != nil {
		what += fmt.Sprintf(" (was %s)", valueText(*cr.Was))
	}
	who := cr.Controller
	if cr.InInput {
		who += " (of the same input)"
	}
	return Escape(fmt.Sprintf("%s of %s %s, which %s sets: until it sets it again, %s runs with that", write, name, what, who, name))
}

// writeWay says which way a Helm upgrade writes, and what the other way
// does differently.
func writeWay(w io.Writer, p *Palette, r *v1alpha1.ConflictReport) {
	h := r.HelmUpgrade
	if h == nil || h.Mode != v1alpha1.HelmClientSide && h.Other == nil {
		return
	}
	if h.Mode == v1alpha1.HelmClientSide {
		fmt.Fprintln(w, p.Yellow(Escape(fmt.Sprintf("  note: predicted as helm upgrade --server-side=%s writes it: Helm's client-side patch from the last revision's object, which deletes what that revision rendered and this render drops, whoever owns it now", h.Flag))))
	}
	o := h.Other
	if o == nil {
		return
	}
	var diffs []string
	if len(o.Keeps) > 0 {
		diffs = append(diffs, "leaves "+pathList(o.Keeps)+" as it is, which this one changes")
	}
	if len(o.Changes) > 0 {
		diffs = append(diffs, "changes "+pathList(o.Changes)+", which this one leaves as it is")
	}
	if o.Conflicts {
		diffs = append(diffs, "fails on conflicts")
	}
	if len(diffs) == 0 {
		return
	}
	fmt.Fprintln(w, p.Yellow(Escape(fmt.Sprintf("  note: helm upgrade --server-side=%s (%s) %s", o.Flag, o.Mode, strings.Join(diffs, "; ")))))
}

func pathList(ps []pathlang.Path) string {
	var out []string
	for _, p := range ps {
		out = append(out, p.String())
	}
	return strings.Join(out, ", ")
}

// writeControlledResets lists the resets a controller undoes, and the ways
// to leave the field to it before the write.
func writeControlledResets(w io.Writer, p *Palette, r *v1alpha1.ConflictReport) {
	if len(r.ControlledResets) == 0 {
		return
	}
	name := r.Object.Display()
	for _, cr := range r.ControlledResets {
		fmt.Fprintln(w, p.Red("  RESET: "+ControlledReset(name, cr, r.HelmUpgrade)))
	}
	ways := append(resolutions(r, remedy.HelmServerSide), resolutions(r, remedy.HandoverToAutoscaler)...)
	if len(ways) == 0 {
		fmt.Fprintln(w, p.Yellow("  set .spec.replicas in the manifest to the live value, or hand it to the autoscaler, before you apply"))
		return
	}
	fmt.Fprintln(w, p.Yellow("  before you apply:"))
	for _, rm := range ways {
		fmt.Fprintf(w, "    %s\n", Escape(rm.Summary))
		if len(rm.Command) > 0 {
			fmt.Fprintln(w, p.Green("     $ "+rm.Command.String()))
		}
		if rm.Snippet != "" && rm.Into != nil {
			fmt.Fprintln(w, p.Green("     add to "+Escape(rm.Into.Which)+": "+Escape(rm.Snippet)))
		}
	}
}

// diffWrite names the write a diff is of.
func diffWrite(r *v1alpha1.DiffReport) string {
	if h := r.HelmUpgrade; h != nil && h.Mode == v1alpha1.HelmClientSide {
		return "a client-side upgrade"
	}
	return "an apply"
}

// writeDiffResetLines writes diffResetLines, a line each.
func writeDiffResetLines(sb *strings.Builder, r *v1alpha1.DiffReport, p *Palette) {
	for _, l := range diffResetLines(r, p) {
		sb.WriteString(l + "\n")
	}
}

// diffResetLines are diff's header lines of the resets a controller undoes
// and of the way a Helm upgrade writes.
func diffResetLines(r *v1alpha1.DiffReport, p *Palette) []string {
	var out []string
	if h := r.HelmUpgrade; h != nil && h.Mode == v1alpha1.HelmClientSide {
		out = append(out, p.Yellow(Escape(fmt.Sprintf("# helm upgrade --server-side=%s patches it client-side: what the last revision rendered and this render drops is deleted, whoever owns it now", h.Flag))))
	}
	if h := r.HelmUpgrade; h != nil && h.Other != nil && (len(h.Other.Keeps) > 0 || len(h.Other.Changes) > 0) {
		o := h.Other
		line := fmt.Sprintf("# helm upgrade --server-side=%s (%s) would differ:", o.Flag, o.Mode)
		if len(o.Keeps) > 0 {
			line += " it leaves " + pathList(o.Keeps) + " as it is;"
		}
		if len(o.Changes) > 0 {
			line += " it changes " + pathList(o.Changes)
		}
		out = append(out, p.Yellow(Escape(line)))
	}
	for _, cr := range r.ControlledResets {
		out = append(out, p.Red("# RESET: "+ControlledReset(r.Object.Display(), cr, r.HelmUpgrade)))
	}
	for _, rm := range r.ResetRemedies {
		out = append(out, p.Dim("#   "+rm.Summary+": "+rm.Command.String()))
	}
	return out
}
