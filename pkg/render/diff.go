package render

import (
	"fmt"
	"io"
	"strings"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/remedy"
)

// diffContext is the number of unchanged lines around each change, as
// diff -u.
const diffContext = 3

// maxStayPaths is how many paths a stays line names.
const maxStayPaths = 10

// blamed is an object's YAML, line by line, with each line's owners and
// the text of its path.
type blamed struct {
	text   []string
	owners [][]v1alpha1.Owner
	paths  []string
}

// blameObject lays out an object's ownership (nil: no object) as YAML
// lines.
func blameObject(r *ownership.Report) *blamed {
	out := &blamed{}
	if r == nil {
		return out
	}
	b := &blamer{r: r}
	b.mapping(r.Content, r.Tree, nil, fieldpath.Path{}, "", "")
	paths := make([]fieldpath.Path, len(b.lines))
	out.text, out.owners = make([]string, len(b.lines)), make([][]v1alpha1.Owner, len(b.lines))
	for i, l := range b.lines {
		out.text[i], out.owners[i], paths[i] = l.text, ownersOf(r, l.owners), l.path
	}
	out.paths = pathStrings(paths)
	return out
}

// pathStrings is the String of each path. Consecutive lines share most
// of their paths' elements (the trie's, or copies of them): the text of a
// shared prefix is reused, and only the rest (a list item's key, costly
// to print) is printed.
func pathStrings(paths []fieldpath.Path) []string {
	out := make([]string, len(paths))
	var prev fieldpath.Path
	var ends []int // ends[k] is where element k of prev ends in its text
	var sb strings.Builder
	for i, p := range paths {
		k := 0
		for k < len(p) && k < len(prev) && sameElement(p[k], prev[k]) {
			k++
		}
		if i > 0 && k == len(p) && k == len(prev) {
			out[i] = out[i-1] // the same path: a literal block's lines
			continue
		}
		sb.Reset()
		if k > 0 {
			sb.WriteString(out[i-1][:ends[k-1]])
		}
		ends = ends[:k]
		for _, pe := range p[k:] {
			sb.WriteString(pe.String())
			ends = append(ends, sb.Len())
		}
		out[i], prev = sb.String(), p
	}
	return out
}

// sameElement tells whether a and b print the same: the same field name,
// index, or the same key or value (the same one, not an equal one).
func sameElement(a, b fieldpath.PathElement) bool {
	switch {
	case a.FieldName != nil && b.FieldName != nil:
		return *a.FieldName == *b.FieldName
	case a.Index != nil && b.Index != nil:
		return *a.Index == *b.Index
	}
	return a.FieldName == nil && b.FieldName == nil && a.Index == nil && b.Index == nil && a.Key == b.Key && a.Value == b.Value && (a.Key != nil || a.Value != nil)
}

// keys are the lines with their paths: lines are matched as the same
// text at the same field, so that a new list item's "resources: {}"
// never stands for an old item's.
func (b *blamed) keys() []string {
	out := make([]string, len(b.text))
	for i, t := range b.text {
		out[i] = b.paths[i] + "\x00" + t
	}
	return out
}

type diffRow struct {
	op   byte // ' ', '-', '+'
	a, b int  // line indices in live and result (-1: none)
}

// Diff renders a DiffReport: a header, a unified diff of the object from
// live to after the apply with each changed line's owners, and what
// other managers keep. live and result are the ownership of the object
// before (nil: the apply creates it) and after the apply, as package diff
// computes them with the report. Every command it prints is the report's.
func Diff(w io.Writer, r *v1alpha1.DiffReport, live, result *ownership.Report, o Options) error {
	w = Terminal(w) // the one way out: see terminal.go
	d := &diffView{r: r, o: o, p: o.Palette}
	d.head()
	d.body(DiffHunks(r, live, result))
	d.stays()
	d.notes()
	_, err := io.WriteString(w, d.sb.String())
	return err
}

// diffView writes one DiffReport's lines.
type diffView struct {
	r  *v1alpha1.DiffReport
	o  Options
	p  *Palette
	sb strings.Builder
}

func (d *diffView) line(s string) { d.sb.WriteString(s + "\n") }

// head is the header: what the apply changes, the resets a controller
// undoes, and why the apply fails (admission, conflicts) with the ways
// out.
func (d *diffView) head() {
	r, p := d.r, d.p
	d.line(p.Bold("# " + DiffHeadline(r)))
	writeDiffResetLines(&d.sb, r, p)
	if r.Admission != nil && r.Admission.Denied != "" && len(r.Conflicts) == 0 {
		d.line(p.Red("# the apply fails: admission refuses it: " + Escape(r.Admission.Denied)))
		d.line(p.Red("# below is what it would have changed"))
	}
	switch {
	case len(r.Conflicts) > 0 && !r.Force:
		d.conflictLines()
	case len(r.Conflicts) > 0:
		d.line(p.Yellow(fmt.Sprintf("# forced: it takes %s from their owners (marked !)", count(len(r.Conflicts), "field"))))
	}
}

// changesSummary ends the header: what the apply changes.
func changesSummary(r *v1alpha1.DiffReport) string {
	values, owners := 0, 0
	for _, ch := range r.Changes {
		if ch.Change == v1alpha1.ChangeOwnership {
			owners++
		} else {
			values++
		}
	}
	switch {
	case r.Action == v1alpha1.ActionCreate:
		return " creates it"
	case values == 0 && owners == 0:
		return " changes nothing"
	case values == 0:
		return fmt.Sprintf(" changes no value, only the owners of %s", count(owners, "field"))
	case owners == 0:
		return fmt.Sprintf(" changes %s", count(values, "value"))
	default:
		return fmt.Sprintf(" changes %s and the owners of %s more", count(values, "value"), count(owners, "field"))
	}
}

// conflictLines say that the apply fails on its conflicts, and the
// report's ways out.
func (d *diffView) conflictLines() {
	r, p := d.r, d.p
	d.line(p.Red(fmt.Sprintf("# the apply fails: it conflicts on %s (marked !). Below is what the forced apply does:", count(len(r.Conflicts), "field"))))
	for _, rm := range r.Remedies {
		switch rm.Kind {
		case remedy.HelmForce:
			d.line(p.Red("#   " + rm.Into.Which + " with " + rm.Snippet))
		case remedy.Force:
			d.line(p.Red("#   " + rm.Command.String()))
		}
	}
	if r.Admission != nil && r.Admission.Denied != "" {
		d.line(p.Red("#   and admission refuses that too: " + Escape(r.Admission.Denied)))
	}
	for _, rm := range r.Remedies {
		if rm.Kind == remedy.Explain {
			d.line(p.Dim("#   " + rm.Summary + ": " + rm.Command.String()))
		}
	}
}

// DiffLine is one line of the unified diff of an object (DiffHunks):
// removed ('-'), added ('+') or the same (' ', shown when its owners
// change or as context), with the owners before and after.
type DiffLine struct {
	Op   byte
	Text string
	// Before are the owners of a removed or kept line, After those of an
	// added or kept one.
	Before, After []v1alpha1.Owner
	// Conflict: the apply conflicts on the line's field.
	Conflict bool
	// OwnersChange: a kept line whose owners change.
	OwnersChange bool
}

// DiffHunk is one @@ range of the unified diff.
type DiffHunk struct {
	// Range is diff -u's "-a,n +b,m".
	Range string
	Lines []DiffLine
}

// DiffHunks lays out the unified diff from live to after the apply (the
// ownership package diff computes with the report, nil live: the apply
// creates the object), each line with its owners, with diffContext
// lines around each change: what the text view prints and the HTML page
// shows. None when nothing changes, not even an owner.
func DiffHunks(r *v1alpha1.DiffReport, live, result *ownership.Report) []DiffHunk {
	before, after := blameObject(live), blameObject(result)
	conflicts := map[string]bool{}
	valueChanged := map[string]bool{}
	for _, ch := range r.Changes {
		if ch.Conflict {
			conflicts[ch.Elements.String()] = true
		}
		if ch.Change != v1alpha1.ChangeOwnership {
			valueChanged[ch.Elements.String()] = true
		}
	}
	// A changed value whose line reads the same (a redacted Secret value)
	// still shows as changed.
	var rows []diffRow
	for _, row := range diffRows(before.keys(), after.keys()) {
		if row.op == ' ' && valueChanged[after.paths[row.b]] {
			rows = append(rows, diffRow{op: '-', a: row.a, b: -1}, diffRow{op: '+', a: -1, b: row.b})
			continue
		}
		rows = append(rows, row)
	}
	interesting := make([]bool, len(rows))
	for i, row := range rows {
		interesting[i] = row.op != ' ' || !v1alpha1.SameOwners(before.owners[row.a], after.owners[row.b])
	}
	var out []DiffHunk
	for _, h := range hunks(interesting, diffContext) {
		out = append(out, hunkOf(rows[h[0]:h[1]], before, after, conflicts))
	}
	return out
}

// hunkOf is one @@ range of rows.
func hunkOf(rows []diffRow, before, after *blamed, conflicts map[string]bool) DiffHunk {
	aStart, aLen, bStart, bLen := -1, 0, -1, 0
	lines := make([]DiffLine, 0, len(rows))
	for _, row := range rows {
		if row.op != '+' {
			if aStart < 0 {
				aStart = row.a
			}
			aLen++
		}
		if row.op != '-' {
			if bStart < 0 {
				bStart = row.b
			}
			bLen++
		}
		switch row.op {
		case '-':
			lines = append(lines, DiffLine{Op: '-', Text: before.text[row.a], Before: before.owners[row.a], Conflict: conflicts[before.paths[row.a]]})
		case '+':
			lines = append(lines, DiffLine{Op: '+', Text: after.text[row.b], After: after.owners[row.b], Conflict: conflicts[after.paths[row.b]]})
		default:
			l := DiffLine{Op: ' ', Text: after.text[row.b], Before: before.owners[row.a], After: after.owners[row.b]}
			l.OwnersChange = !v1alpha1.SameOwners(l.Before, l.After)
			lines = append(lines, l)
		}
	}
	return DiffHunk{Range: fmt.Sprintf("-%s +%s", unifiedRange(aStart, aLen), unifiedRange(bStart, bLen)), Lines: lines}
}

// body is the unified diff from live to after the apply, each changed
// line with its owners, conflicts marked.
func (d *diffView) body(hunks []DiffHunk) {
	if len(hunks) == 0 {
		return
	}
	p, o := d.p, d.o
	d.line(p.Dim("--- live"))
	d.line(p.Dim("+++ after the apply"))
	for _, h := range hunks {
		d.line(p.Dim("@@ " + h.Range + " @@"))
		for _, l := range h.Lines {
			switch {
			case l.Op == '-':
				d.line(p.Red("-"+Escape(l.Text)) + annotation(p, l.Before, l.Conflict, o))
			case l.Op == '+':
				d.line(p.Green("+"+Escape(l.Text)) + annotation(p, l.After, l.Conflict, o))
			case l.OwnersChange:
				d.line(" " + Escape(l.Text) + p.Yellow("  # owners: "+ownerList(o, l.Before)+" -> "+ownerList(o, l.After)))
			default:
				d.line(" " + Escape(l.Text))
			}
		}
	}
}

// stays are the change counts, then what other managers keep, each with
// the report's command that hands it to the applier, or why none.
func (d *diffView) stays() {
	r, p := d.r, d.p
	if n := countKinds(r.Changes); n != "" {
		d.line(p.Dim("# " + n))
	}
	if len(r.Stays) == 0 {
		return
	}
	d.line(p.Bold("# stays: fields the manifest does not set, which their managers keep (the apply neither sets nor removes them):"))
	for _, s := range r.Stays {
		paths := make([]string, len(s.Paths))
		for i, pth := range s.Paths {
			paths[i] = Escape(pth.String())
		}
		if len(paths) > maxStayPaths {
			paths = append(paths[:maxStayPaths:maxStayPaths], fmt.Sprintf("and %d more (-o json lists them all)", len(s.Paths)-maxStayPaths))
		}
		if len(s.Defaulted) > 0 {
			paths = append(paths, fmt.Sprintf("(and %s at %s default)", count(len(s.Defaulted), "field"), map[bool]string{true: "its", false: "their"}[len(s.Defaulted) == 1]))
		}
		d.line(fmt.Sprintf("#   %s: %s", d.o.colorOwners([]v1alpha1.Owner{s.Manager}), strings.Join(paths, ", ")))
		if s.Note != "" {
			d.line(p.Yellow("#     " + Escape(s.Note)))
		}
		if why := StayWhy(r.FieldManager, s); why != "" {
			// (A note says why there is no command.)
			d.line(p.Dim("#     " + why))
		}
		if len(s.Command) > 0 {
			d.line("#     " + s.Command.String())
		}
	}
}

// notes are what the prediction does not know: checks it skips,
// admission, fields the apiserver may set, warnings.
func (d *diffView) notes() {
	lines, bad := DiffNotes(d.r)
	for i, l := range lines {
		if bad[i] {
			d.line(d.p.Yellow("# " + l))
		} else {
			d.line(d.p.Dim("# " + l))
		}
	}
}

// DiffNotes are what diff's prediction does not know (checks it skips,
// admission, fields the apiserver may set) and its warnings, a line
// each, and which of them warn.
func DiffNotes(r *v1alpha1.DiffReport) (lines []string, bad []bool) {
	for _, u := range r.Unchecked {
		lines, bad = append(lines, "not exact: "+Escape(u)+": kubectl ssa explain-conflict --verify checks it"), append(bad, true)
	}
	al, ab := admissionLines(r.Admission, "kubectl ssa explain-conflict --verify")
	lines, bad = append(lines, al...), append(bad, ab...)
	if len(r.Unknown) > 0 {
		paths := make([]string, len(r.Unknown))
		for i, u := range r.Unknown {
			paths[i] = Escape(u.String())
		}
		lines, bad = append(lines, "not known here: the apiserver may set these fields, to values it allocates or defaults that depend on others: "+strings.Join(paths, ", ")), append(bad, true)
	}
	for _, wn := range r.Warnings {
		lines, bad = append(lines, "warning: "+Escape(wn)), append(bad, true)
	}
	return lines, bad
}

// DiffCounts counts the changes by kind: "2 modified, 1 added".
func DiffCounts(r *v1alpha1.DiffReport) string { return countKinds(r.Changes) }

func count(n int, what string) string { return fmt.Sprintf("%d %s%s", n, what, plural(n)) }

func countKinds(changes []v1alpha1.DiffChange) string {
	counts := map[v1alpha1.ChangeKind]int{}
	for _, c := range changes {
		counts[c.Change]++
	}
	var parts []string
	for _, k := range []v1alpha1.ChangeKind{v1alpha1.ChangeModified, v1alpha1.ChangeAdded, v1alpha1.ChangeRemoved, v1alpha1.ChangeReset, v1alpha1.ChangeOwnership} {
		if counts[k] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[k], k))
		}
	}
	return strings.Join(parts, ", ")
}

func annotation(p *Palette, owners []v1alpha1.Owner, conflict bool, o Options) string {
	s := "  # " + ownerList(o, owners)
	if conflict {
		s += " !"
	}
	return p.Dim(s)
}

func ownerList(o Options, owners []v1alpha1.Owner) string {
	if len(owners) == 0 {
		return "(unowned)"
	}
	return o.plainOwners(owners)
}

// hunks groups the interesting rows with n rows of context, merging
// groups whose context touches: [start, end) pairs.
func hunks(interesting []bool, n int) [][2]int {
	var out [][2]int
	for i := 0; i < len(interesting); i++ {
		if !interesting[i] {
			continue
		}
		start := max(0, i-n)
		end := min(len(interesting), i+n+1)
		if len(out) > 0 && start <= out[len(out)-1][1] {
			out[len(out)-1][1] = end
		} else {
			out = append(out, [2]int{start, end})
		}
	}
	return out
}

// unifiedRange is diff -u's "start,length" (1-based; an empty range
// names the line before it).
func unifiedRange(start, length int) string {
	if length == 0 {
		return fmt.Sprintf("%d,0", max(start, 0))
	}
	if length == 1 {
		return fmt.Sprintf("%d", start+1)
	}
	return fmt.Sprintf("%d,%d", start+1, length)
}
