package render

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/remedy"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/tools"
)

// nsFlag is the connection flags and -n, as pasted.
func nsFlag(t remedy.Target) string {
	if words := t.Line(nil); len(words) > 0 {
		return " " + words.String()
	}
	return ""
}

// ConflictExplanation renders the prediction for one object from its
// report alone: every value it quotes is report data (t names the object
// in the one hint that is not a remedy: how to release a retained field).
func ConflictExplanation(w io.Writer, r *v1alpha1.ConflictReport, o Options, t remedy.Target) {
	w = Terminal(w) // the one way out: see terminal.go
	p := o.Palette
	fmt.Fprintf(w, "%s %s\n", p.Bold("# "+Escape(r.Object.Display())+":"), conflictVerdict(r, p))
	writeConflictNotes(w, p, r)
	writeAutoscalerNote(w, p, r)
	writeWay(w, p, r)
	writeControlledResets(w, p, r)

	// A forced apply that admission refuses takes nothing.
	deniedForce := r.Force && r.Admission != nil && r.Admission.Denied != ""
	writeConflicts(w, r, o, deniedForce)
	if r.Message != "" && len(r.Conflicts) > 0 && !deniedForce {
		// (A denial's answer is the header's.)
		fmt.Fprintln(w)
		fmt.Fprintln(w, p.Bold("The apiserver would answer:"))
		for _, l := range strings.Split(r.Message, "\n") {
			fmt.Fprintf(w, "  %s\n", Escape(l))
		}
		fmt.Fprintln(w)
		fmt.Fprintln(w, p.Bold("Ways to resolve it:"))
		writeResolutions(w, r, p)
	}
	writeAdoption(w, r, p)
	if r.Force && len(r.Released) > 0 && !deniedForce {
		fmt.Fprintln(w)
		fmt.Fprintln(w, p.Bold("Managers left owning nothing (they disappear from managedFields):"))
		for _, m := range r.Released {
			fmt.Fprintf(w, "  %s\n", p.Manager(m.Manager, o.OwnerLabel(m)))
		}
	}
	writeRemovals(w, r, o, t)
	writeVerification(w, p, r)
}

// conflictVerdict is the header's verdict: refused, denied, created,
// conflicts, forced, resets, not exact, or success.
func conflictVerdict(r *v1alpha1.ConflictReport, p *Palette) string {
	verb := "apply"
	if r.Subresource != "" {
		verb = "apply to /" + string(r.Subresource)
	}
	if h := r.HelmUpgrade; h != nil && h.Mode == v1alpha1.HelmClientSide {
		verb = "client-side upgrade"
	}
	who := Escape(fmt.Sprintf("%q", r.FieldManager))
	switch {
	case r.Refused != nil:
		return p.Red(fmt.Sprintf("REFUSED: %s refuses it before it applies anything: %s", r.Refused.Tool, Escape(r.Refused.Message)))
	case r.Admission != nil && r.Admission.Denied != "":
		return p.Red(fmt.Sprintf("DENIED: admission refuses the %s as %s: %s", verb, who, Escape(r.Admission.Denied)))
	case r.Action == v1alpha1.ActionCreate:
		return p.Green(fmt.Sprintf("does not exist: the %s as %s creates it (no conflicts)", verb, who))
	case r.Message != "":
		n := len(r.Conflicts)
		return p.Red(fmt.Sprintf("CONFLICT: the %s as %s would fail with %d conflict%s", verb, who, n, plural(n)))
	case r.Force && len(r.Conflicts) > 0:
		return p.Yellow(fmt.Sprintf("the forced %s as %s succeeds and takes %d field%s from other managers", verb, who, len(r.Conflicts), plural(len(r.Conflicts))))
	case len(r.ControlledResets) > 0:
		return p.Red(fmt.Sprintf("RESETS what a controller sets: the %s as %s succeeds, and %s (below)", verb, who, Escape(r.ControlledResets[0].Path.String())))
	case len(r.Unchecked) > 0:
		return p.Yellow(fmt.Sprintf("the %s as %s has no conflicts, but validation not modelled here may refuse it (below)", verb, who))
	default:
		return p.Green(fmt.Sprintf("the %s as %s succeeds without conflicts", verb, who))
	}
}

// writeConflictNotes are the lines under the header: warnings, what the
// prediction does not check, the writer's note and admission.
func writeConflictNotes(w io.Writer, p *Palette, r *v1alpha1.ConflictReport) {
	lines, bad := ConflictNotes(r)
	for i, l := range lines {
		if bad[i] {
			fmt.Fprintf(w, "  %s\n", p.Yellow(l))
		} else {
			fmt.Fprintf(w, "  %s\n", p.Dim(l))
		}
	}
}

// ConflictNotes are the lines under explain-conflict's verdict (warnings,
// what the prediction does not check, the writer's note, admission), and
// which of them warn.
func ConflictNotes(r *v1alpha1.ConflictReport) (lines []string, bad []bool) {
	for _, warn := range r.Warnings {
		lines, bad = append(lines, "warning: "+Escape(warn)), append(bad, true)
	}
	for _, u := range r.Unchecked {
		line := "not exact: " + Escape(u)
		if h := verifyHint(r.Verify != nil, "--verify"); h != "" {
			line += ": " + h + " checks it"
		}
		lines, bad = append(lines, line), append(bad, true)
	}
	if note := writerNote(r); note != "" {
		lines, bad = append(lines, "note: "+Escape(note)), append(bad, true)
	}
	al, ab := admissionLines(r.Admission, verifyHint(r.Verify != nil, "--verify"))
	return append(lines, al...), append(bad, ab...)
}

// writeConflicts lists the conflicts (or the fields the force takes),
// each with its owner and both values.
func writeConflicts(w io.Writer, r *v1alpha1.ConflictReport, o Options, deniedForce bool) {
	if len(r.Conflicts) == 0 {
		return
	}
	p := o.Palette
	fmt.Fprintln(w)
	if deniedForce {
		fmt.Fprintln(w, p.Bold("Fields the force would take (admission refuses the apply: it takes none):"))
	} else if r.Force {
		fmt.Fprintln(w, p.Bold("Fields the force takes:"))
	} else {
		fmt.Fprintln(w, p.Bold("Conflicts:"))
	}
	for _, cf := range r.Conflicts {
		fmt.Fprintf(w, "  %s\n", p.Bold(Escape(displayConflictPath(cf))))
		since := ""
		if cf.Time != nil && o.showTime() {
			since = ", last write " + o.FormatTime(cf.Time)
			if o.Time == TimeRelative {
				since += " ago"
			}
		}
		fmt.Fprintf(w, "    owner:      %s (%s%s, %s%s)\n", p.Manager(cf.Manager, fmt.Sprintf("%q", cf.Manager)), cf.Operation, subDesc(string(cf.Subresource)), Escape(cf.APIVersion), since)
		if cf.Likely != "" {
			fmt.Fprintf(w, "    likely:     %s\n", Escape(cf.Likely))
		}
		if len(cf.StoredAs) > 0 {
			fmt.Fprintf(w, "    live value: (write-only: the apiserver stores it as %s)\n", Escape(cf.StoredAs.String()))
		} else {
			fmt.Fprintf(w, "    live value: %s\n", valueText(cf.LiveValue))
		}
		fmt.Fprintf(w, "    your value: %s\n", valueText(cf.AppliedValue))
	}
}

// writeAdoption is the ways to have the tool that refused the object
// adopt it.
func writeAdoption(w io.Writer, r *v1alpha1.ConflictReport, p *Palette) {
	if r.Refused == nil {
		return
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, p.Bold("Ways to have "+string(r.Refused.Tool)+" adopt it:"))
	for _, rm := range r.Resolutions {
		if rm.Kind != remedy.HelmTakeOwnership && rm.Kind != remedy.HelmOwnershipMetadata {
			continue
		}
		fmt.Fprintf(w, "  %s\n", Escape(rm.Summary))
		if len(rm.Command) > 0 {
			fmt.Fprintln(w, p.Green("     $ "+rm.Command.String()))
		}
		writeSnippet(w, rm, p)
	}
}

// writeRemovals are what the write removes, resets, may reset, and what
// it does not remove because others own it.
func writeRemovals(w io.Writer, r *v1alpha1.ConflictReport, o Options, t remedy.Target) {
	p := o.Palette
	if len(r.Removed) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, p.Bold(removalHeading(r, "removes (you owned them alone, no longer set them, and they have no default):", "deletes (the last revision rendered them and this render does not, whoever owns them now; they have no default):")))
		for _, path := range r.Removed {
			fmt.Fprintf(w, "  %s\n", Escape(path.String()))
		}
	}
	if len(r.Reset) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, p.Bold(removalHeading(r, "resets (you owned them alone and no longer set them; the apiserver sets them again):", "resets (the last revision rendered them and this render does not, whoever owns them now; the apiserver sets them again):")))
		for _, rs := range r.Reset {
			fmt.Fprintf(w, "  %s  %s\n", Escape(rs.Path.String()), resetText(rs))
		}
	}
	if len(r.MaybeReset) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, p.Bold("The apply may reset (you owned them alone and no longer set them; their default depends on other fields):"))
		for _, m := range r.MaybeReset {
			fmt.Fprintf(w, "  %s  may be reset to a default that depends on other fields (%s)\n", Escape(m.Path.String()), Escape(m.DependsOn))
		}
	}
	if len(r.Retained) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, p.Bold("The apply does NOT remove (you no longer set them, but other managers own them):"))
		for _, ret := range r.Retained {
			fmt.Fprintf(w, "  %s  kept by %s\n", Escape(ret.Path.String()), o.colorOwners(ret.Owners))
		}
		fmt.Fprintf(w, "  %s\n", p.Dim("to have this apply remove one, release it from those owners first: kubectl ssa handover release "+shellQuote(t.ResourceArg)+nsFlag(t)+" --field PATH --from MANAGER"))
	}
}

// removalHeading is the heading of what the write removes or resets: an
// apply's (by ownership), or Helm's client-side patch's (by revision).
func removalHeading(r *v1alpha1.ConflictReport, apply, clientSide string) string {
	if h := r.HelmUpgrade; h != nil && h.Mode == v1alpha1.HelmClientSide {
		return "The client-side upgrade " + clientSide
	}
	return "The apply " + apply
}

// writeVerification says what --verify found, and the server's warnings
// that the prediction did not say already.
func writeVerification(w io.Writer, p *Palette, r *v1alpha1.ConflictReport) {
	if r.Verify == nil {
		return
	}
	fmt.Fprintln(w)
	switch r.Verify.Status {
	case v1alpha1.VerifyAgrees:
		line := "--verify: the server's dry run agrees with the prediction"
		if r.Verify.FirstApplyOnly {
			line += " of " + r.Verify.Compared
		}
		fmt.Fprintln(w, p.Green(line))
	case v1alpha1.VerifyRefused, v1alpha1.VerifyNotRun:
		fmt.Fprintln(w, p.Red("--verify: not verified: "+Escape(r.Verify.Reason)))
	case v1alpha1.VerifyResolved:
		line := "--verify: the server's dry run answers for what is not evaluated here: it applies the apply, with:"
		if r.Verify.ServerDenied != "" {
			// The denial is among the differences.
			line = "--verify: the server's dry run answers for what is not evaluated here: it refuses the apply:"
		}
		if len(r.Verify.ServerConfiguration) > 0 {
			line = "--verify: the server's dry run answers for what its configuration decides (" + strings.Join(r.Verify.ServerConfiguration, ", ") + "):"
			if r.Verify.ServerDenied != "" {
				line = strings.TrimSuffix(line, ":") + ": it refuses the apply:"
			}
		}
		fmt.Fprintln(w, p.Yellow(Escape(line)))
		for _, d := range r.Verify.Differences {
			fmt.Fprintf(w, "  %s\n", Escape(d))
		}
	default:
		fmt.Fprintln(w, p.Red("--verify: the server's dry run differs from the prediction:"))
		for _, d := range r.Verify.Differences {
			fmt.Fprintf(w, "  %s\n", Escape(d))
		}
	}
	predicted := 0
	for _, sw := range r.Verify.ServerWarnings {
		if r.Admission != nil && slices.Contains(r.Admission.Warnings, sw) {
			// Said above, as predicted: said once.
			predicted++
			continue
		}
		fmt.Fprintf(w, "  %s\n", p.Yellow("the server's dry run warns: "+Escape(sw)))
	}
	if predicted > 0 {
		fmt.Fprintf(w, "  %s\n", p.Dim(fmt.Sprintf("the server's dry run returns the %d predicted warning(s) above", predicted)))
	}
}

// writeAutoscalerNote points to the handovers that leave .spec.replicas
// to an autoscaler: one from each manager that holds it, computed from the
// live object (a client-side apply manager holds it in its last-applied
// annotation even once the autoscaler's writes took its managedFields).
func writeAutoscalerNote(w io.Writer, p *Palette, r *v1alpha1.ConflictReport) {
	if len(r.Autoscalers) == 0 {
		return
	}
	var each []string
	for _, a := range r.Autoscalers {
		each = append(each, fmt.Sprintf("%s (min %d, max %d)", Escape(a.Name), a.MinReplicas, a.MaxReplicas))
	}
	head := fmt.Sprintf("  note: HorizontalPodAutoscaler %s scales this object: its controller sets .spec.replicas, and your manifest sets it too.", each[0])
	if len(each) > 1 {
		head = fmt.Sprintf("  note: HorizontalPodAutoscalers %s all scale this object: they fight over .spec.replicas (delete all but one), and your manifest sets it too.", strings.Join(each, ", "))
	}
	handovers := resolutions(r, remedy.HandoverToAutoscaler)
	if len(handovers) == 0 {
		fmt.Fprintln(w, p.Yellow(head+" It is the autoscaler's already (nothing else holds it): leave replicas out of your manifest."))
		return
	}
	fmt.Fprintln(w, p.Yellow(head+" Hand the field to the autoscaler, then leave replicas out of your manifest:"))
	for _, h := range handovers {
		fmt.Fprintln(w, p.Green("     $ "+h.Command.String()))
		for _, holder := range r.ReplicasHolders {
			if holder.Manager == h.Manager && holder.LastApplied {
				fmt.Fprintf(w, "       (also takes .spec.replicas out of the last-applied annotation of %s, so that kubectl apply leaves it to the autoscaler)\n", Escape(fmt.Sprintf("%q", h.Manager)))
			}
		}
	}
}

// resolutions are the report's remedies of a kind, in order.
func resolutions(r *v1alpha1.ConflictReport, k remedy.Kind) []remedy.Remedy {
	var out []remedy.Remedy
	for _, rm := range r.Resolutions {
		if rm.Kind == k {
			out = append(out, rm)
		}
	}
	return out
}

// command is the report's first remedy of a kind's command, pasteable.
func command(r *v1alpha1.ConflictReport, k remedy.Kind) string {
	if rs := resolutions(r, k); len(rs) > 0 {
		return rs[0].Command.String()
	}
	return ""
}

func writeResolutions(w io.Writer, r *v1alpha1.ConflictReport, p *Palette) {
	cmd := func(s string) string { return p.Green("     $ " + s) }
	controllers := true
	for _, cf := range r.Conflicts {
		controllers = controllers && (cf.Subresource == v1alpha1.SubresourceScale || cf.Manager == ownership.KubeControllerManager)
	}
	if controllers {
		fmt.Fprintln(w, "  (The owner scales or controls the object: usually leave the field to it, option 2.)")
	}
	force := command(r, remedy.Force)
	switch {
	case len(resolutions(r, remedy.Force)) == 0:
		// Helm's input: Helm's own flags, with the tool's fixes below.
		fmt.Fprintf(w, "  1. Take the fields: force the upgrade, with Helm's flags below. This takes %s.\n", Escape(v1alpha1.Takes(r.Conflicts)))
	case force == "":
		// An apply to /scale: kubectl has no command for it.
		fmt.Fprintf(w, "  1. Take the fields: force the apply in the program that applies to /scale (client-go: ApplyOptions{Force: true}); kubectl apply can't send the Scale object /scale takes. This takes %s.\n", Escape(v1alpha1.Takes(r.Conflicts)))
	default:
		fmt.Fprintf(w, "  1. Take the fields: force the apply. This takes %s.\n", Escape(v1alpha1.Takes(r.Conflicts)))
	}
	fmt.Fprintln(w, "     The other manager may write them back (a controller will): then hand them over instead.")
	if fa := r.ForcedAdmission; fa != nil && fa.Denied != "" {
		fmt.Fprintln(w, p.Red("     Admission would then refuse it: "+Escape(fa.Denied)))
	} else if fa != nil && !fa.Exact {
		fmt.Fprintln(w, p.Yellow("     Admission not evaluated here matches the forced apply ("+Escape(strings.Join(fa.Reasons, "; "))+"): check it with --force-conflicts --verify."))
	}
	if force != "" {
		fmt.Fprintln(w, cmd(force))
	}
	// A path two managers own is one conflict per manager: list it once.
	var unique []v1alpha1.Conflict
	listed := map[string]bool{}
	for _, cf := range r.Conflicts {
		if key := cf.Path.APIServerString(); !listed[key] {
			listed[key] = true
			unique = append(unique, cf)
		}
	}
	fmt.Fprintln(w, "  2. Leave them to their owner: remove these fields from your manifest, then apply:")
	for _, cf := range unique {
		fmt.Fprintf(w, "       %s\n", Escape(displayConflictPath(cf)))
	}
	fmt.Fprintln(w, "  3. Share them: set them in your manifest to the live values; equal values are co-owned, not conflicts:")
	for _, cf := range unique {
		if len(cf.StoredAs) > 0 {
			fmt.Fprintf(w, "       %s: can't be shared: stringData is write-only (stored as %s), so every apply of it changes it\n", Escape(displayConflictPath(cf)), Escape(cf.StoredAs.String()))
			continue
		}
		fmt.Fprintf(w, "       %s: %s\n", Escape(displayConflictPath(cf)), valueText(cf.LiveValue))
	}
	fmt.Fprintln(w, "  4. Hand them over to you, without their values changing now (your next apply then sets yours, with no conflict):")
	handovers := resolutions(r, remedy.Handover)
	if r.Subresource != "" {
		fmt.Fprintf(w, "       (not to an apply to /%s: handover gives fields to an applier of the object itself; apply the object with them instead)\n", Escape(string(r.Subresource)))
	}
	for _, cf := range v1alpha1.FirstPerOwner(r.Conflicts) {
		if r.AutoscalerTakesBack(cf) {
			fmt.Fprintln(w, "       (not from the autoscaler's controller: it writes .spec.replicas again at its next scaling; see the note above)")
			continue
		}
		for _, h := range handovers {
			if h.Manager == cf.Manager && h.Subresource == string(cf.Subresource) {
				fmt.Fprintln(w, cmd(h.Command.String()))
			}
		}
	}
	n := 5
	for _, rm := range r.Resolutions {
		if rm.Tool == "" || rm.Kind == remedy.HelmTakeOwnership {
			continue // (adoption has its own section)
		}
		fmt.Fprintf(w, "  %d. %s\n", n, Escape(rm.Summary))
		n++
		writeSnippet(w, rm, p)
	}
	fmt.Fprintln(w, "  See who owns what: "+p.Green(command(r, remedy.WhoOwns)))
}

// writeSnippet says where a tool's remedy goes and shows its snippet.
func writeSnippet(w io.Writer, rm remedy.Remedy, p *Palette) {
	if rm.Into == nil || rm.Snippet == "" {
		return
	}
	where := rm.Into.Which
	if rm.Into.File != "" {
		where = rm.Into.File + " (" + where + ")"
	}
	switch rm.Into.Edit {
	case remedy.Merge:
		fmt.Fprintf(w, "     Merge into %s (%s %s):\n", Escape(where), Escape(rm.Into.APIVersion), Escape(rm.Into.Kind))
	case remedy.Replace:
		fmt.Fprintf(w, "     In %s, replace the lines that render them with:\n", Escape(where))
	case remedy.Remove:
		fmt.Fprintf(w, "     In %s, remove the last line here:\n", Escape(where))
	case remedy.Append:
		fmt.Fprintf(w, "     Add to %s:\n", Escape(where))
	}
	for _, l := range strings.Split(strings.TrimSuffix(rm.Snippet, "\n"), "\n") {
		fmt.Fprintln(w, p.Green("       "+Escape(l)))
	}
}

func displayConflictPath(cf v1alpha1.Conflict) string { return cf.Path.String() }

func subDesc(sub string) string {
	if sub == "" {
		return ""
	}
	return fmt.Sprintf(" with subresource %q", sub)
}

func valueText(v any) string {
	if v == nil {
		return "(not set)"
	}
	if v == v1alpha1.Redacted {
		return v1alpha1.Redacted
	}
	s := compactJSON(v)
	if r := []rune(s); len(r) > 200 {
		s = string(r[:199]) + "…"
	}
	return Escape(s)
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// resetText says what a reset field becomes, and whether that changes it.
func resetText(rs v1alpha1.Reset) string {
	text := "reset to its default " + valueText(rs.Value)
	if rs.Kept {
		text = "kept: the apiserver keeps the value it allocated, " + valueText(rs.Value)
	}
	if rs.Unchanged {
		return text + " (unchanged)"
	}
	if rs.Was != nil {
		return text + " (was " + valueText(*rs.Was) + ")"
	}
	return text
}

// writerNote is what the prediction of a plain apply means for a tool
// that never fails on a conflict, as it writes the object now
// (r.ApplierOperation): a forced server-side apply, or a client-side one.
func writerNote(r *v1alpha1.ConflictReport) string {
	if r.Message == "" || len(r.Conflicts) == 0 {
		return ""
	}
	k, ok := tools.WriterOf(r.FieldManager, r.ApplierOperation)
	switch {
	case ok && k.ClientSide:
		return fmt.Sprintf("%q writes this object client-side now (its entry is an Update): %s. Its next write does not fail on these conflicts: it sets your values over them, and deletes what its last write set and your manifest drops, whoever owns it now (the fixes in %s's terms below say what keeps them safe)", r.FieldManager, k.Says, k.Product)
	case ok && k.Forces:
		return fmt.Sprintf("%q is %s: it does not fail, it takes the conflicting fields and sets your values (the fixes in %s's terms are below)", r.FieldManager, k.Says, k.Product)
	}
	return ""
}
