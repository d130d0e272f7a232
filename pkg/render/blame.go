package render

import (
	"io"
	"sort"
	"strings"
	"unicode/utf8"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/pathlang"
)

type lineKind = LineKind

const (
	lineOwned      = LineOwned
	lineStructural = LineStructural // a map or list line whose owned fields are below it
	lineUnowned    = LineUnowned    // present in the object, owned by nobody
	lineUntracked  = LineUntracked  // identity and server metadata, never owned
)

type blameLine struct {
	kind   lineKind
	owners []int
	text   string
	// path is the field the line shows (a scalar's block lines share it);
	// item, on the first line of a list item, is the item's.
	path, item fieldpath.Path
}

type blamer struct {
	r     *ownership.Report
	lines []blameLine
}

// Blame renders the object's YAML with a gutter naming the owners of each
// line. Shared fields list every co-owner; lines inside an atomic value are
// owned by the atomic value's owners; lines nobody owns say so and are never
// attributed to an ancestor.
//
// Of a filtered report (--manager, --field, --shared, --unowned ...) it
// shows the lines of the fields the filter kept, under the lines that hold
// them (with an empty gutter), and leaves the rest out: dimming the rest
// instead would bury a few matches in a large object, and shows nothing at
// all where there is no colour (a pipe, NO_COLOR).
func Blame(w io.Writer, r *ownership.Report, o Options) error {
	w = Terminal(w) // the one way out: see terminal.go
	if err := Header(w, r, o, ""); err != nil {
		return err
	}
	if o.showTime() {
		if err := writeLine(w, o.Palette.Dim("# times are each manager's last write to the object, not when the line changed")); err != nil {
			return err
		}
	}
	lines, filtered := BlameLines(r)
	if filtered && len(lines) == 0 {
		return writeLine(w, o.Palette.Dim("("+o.empty()+")"))
	}
	if filtered {
		if err := writeLine(w, o.Palette.Dim("# the lines the filter selects, under the lines that hold them (no gutter)")); err != nil {
			return err
		}
	}
	gutters := make([]string, len(lines))
	width := 0
	for i, l := range lines {
		switch l.Kind {
		case LineOwned:
			gutters[i] = o.plainOwners(l.Owners)
		case LineUnowned:
			gutters[i] = "(unowned)"
		case LineUntracked:
			gutters[i] = "(not tracked)"
		}
		width = max(width, utf8.RuneCountInString(gutters[i]))
	}
	var sb strings.Builder
	for i, l := range lines {
		g := gutters[i]
		pad := strings.Repeat(" ", width-utf8.RuneCountInString(g))
		switch {
		case g == "":
		case l.Kind == LineOwned:
			g = o.colorOwners(l.Owners)
		default:
			g = o.Palette.Dim(g)
		}
		if l.Text == "" {
			// an empty line of a literal block: no trailing space
			sb.WriteString(g + pad + o.Palette.Dim(" │") + "\n")
			continue
		}
		sb.WriteString(g + pad + o.Palette.Dim(" │ ") + Escape(l.Text) + "\n")
	}
	_, err := io.WriteString(w, sb.String())
	return err
}

// LineKind says whose a line of an object's YAML is (BlameLines).
type LineKind int

// The kinds of lines.
const (
	// LineOwned: Owners own the line's field (or the atomic value it is in).
	LineOwned LineKind = iota
	// LineStructural: a map or list whose owned fields are below it, or a
	// line that holds a line a filter selects (no owners shown).
	LineStructural
	// LineUnowned: present in the object, owned by nobody.
	LineUnowned
	// LineUntracked: identity and server metadata, never owned.
	LineUntracked
)

// BlameLine is one line of an object's YAML with its owners: what the
// blame view prints, and what other views (the HTML page) lay out.
type BlameLine struct {
	Kind   LineKind
	Owners []v1alpha1.Owner
	Text   string
}

// BlameLines lays out a report's object as YAML lines, each with its
// owners. Of a filtered report (filtered is true) they are the lines of
// the fields the filter kept, under the lines that hold them (as
// LineStructural), and none when it kept nothing.
func BlameLines(r *ownership.Report) (lines []BlameLine, filtered bool) {
	b := &blamer{r: r}
	b.mapping(r.Content, r.Tree, nil, fieldpath.Path{}, "", "")
	show, context := b.shown()
	if show != nil && len(show) == 0 {
		return nil, true
	}
	out := make([]BlameLine, 0, len(b.lines))
	for i, l := range b.lines {
		switch {
		case show == nil || show[i]:
			kind := l.kind
			if kind == LineStructural {
				out = append(out, BlameLine{Kind: kind, Text: l.text})
				continue
			}
			out = append(out, BlameLine{Kind: kind, Owners: ownersOf(r, l.owners), Text: l.text})
		case context[i]:
			out = append(out, BlameLine{Kind: LineStructural, Text: l.text})
		}
	}
	return out, show != nil
}

func (b *blamer) add(kind lineKind, owners []int, text string, p fieldpath.Path) {
	if kind == lineOwned && len(owners) == 0 {
		kind = lineUnowned
	}
	b.lines = append(b.lines, blameLine{kind: kind, owners: owners, text: text, path: p})
}

// shown decides, for a filtered report, which lines show: those of the
// fields it kept (and the lines inside them that their owners own with
// them, or that nobody owns below a kept unowned path), and as context the
// lines that hold those. nil, nil: everything shows.
func (b *blamer) shown() (show, context []bool) {
	r := b.r
	if !r.Filtered {
		return nil, nil
	}
	fields, atomic, unowned := &fieldpath.Set{}, &fieldpath.Set{}, &fieldpath.Set{}
	for _, f := range r.Fields {
		p := f.Path.Elements()
		fields.Insert(p)
		if n := nodeAt(r.Tree, p); n.Atomic() {
			atomic.Insert(p)
		}
	}
	for _, u := range r.Unowned {
		unowned.Insert(u.Elements())
	}
	selected := func(l blameLine) bool {
		if l.kind == lineOwned && (fields.Has(l.path) || l.item != nil && fields.Has(l.item)) {
			return true
		}
		for k := len(l.path); k >= 0; k-- {
			prefix := l.path[:k]
			if atomic.Has(prefix) && l.kind == lineOwned || unowned.Has(prefix) && l.kind == lineUnowned {
				return true
			}
		}
		return false
	}
	show, context = make([]bool, len(b.lines)), make([]bool, len(b.lines))
	// The lines that hold a line are the nearest ones above it that are
	// less indented; an item's "- " counts as one more column than its
	// parent key's, which kubectl's YAML writes at the same column.
	var stack []int
	depth := func(text string) int {
		n := len(text) - len(strings.TrimLeft(text, " "))
		if strings.HasPrefix(text[n:], "-") {
			n++
		}
		return n
	}
	any := false
	for i, l := range b.lines {
		if l.text == "" {
			// an empty line of a literal block goes with its block
			show[i] = i > 0 && show[i-1]
			continue
		}
		d := depth(l.text)
		for len(stack) > 0 && depth(b.lines[stack[len(stack)-1]].text) >= d {
			stack = stack[:len(stack)-1]
		}
		if selected(l) {
			show[i], any = true, true
			for _, j := range stack {
				context[j] = true
			}
		}
		stack = append(stack, i)
	}
	if !any {
		return []bool{}, nil
	}
	return show, context
}

// nodeAt returns the trie node of p, or nil.
func nodeAt(n *ownership.Node, p fieldpath.Path) *ownership.Node {
	for _, pe := range p {
		if n = n.Child(pe); n == nil {
			return nil
		}
	}
	return n
}

// classify decides a line's owners: the node's own owners, else those of an
// atomic ancestor (covered); a container with owned descendants is
// structural; anything else is unowned.
func classify(n *ownership.Node, covered []int, p fieldpath.Path, container bool) (lineKind, []int) {
	// The paths never owned are one or two fields deep: a path's string
	// costs more than the rest of a line's work.
	if len(p) <= 2 && pathlang.NeverOwned(p.String()) {
		return lineUntracked, nil
	}
	if n != nil && len(n.Owners) > 0 {
		return lineOwned, n.Owners
	}
	if covered != nil {
		return lineOwned, covered
	}
	if container && (n != nil || len(p) == 1 && p[0].FieldName != nil && *p[0].FieldName == "metadata") {
		return lineStructural, nil
	}
	return lineUnowned, nil
}

func coverFor(n *ownership.Node, covered []int) []int {
	if n.Atomic() {
		return n.Owners
	}
	return covered
}

// mapping emits a map's keys; first is the prefix of the first line ("- "
// for a list item), indent the prefix of the others.
func (b *blamer) mapping(m map[string]any, n *ownership.Node, covered []int, p fieldpath.Path, first, indent string) {
	if len(m) == 0 {
		return
	}
	for i, k := range SortedKeys(m) {
		lead := indent
		if i == 0 {
			lead = first
		}
		key := k
		pe := fieldpath.PathElement{FieldName: &key}
		cn := n.Child(pe)
		cp := childPath(p, pe, cn)
		b.value(m[k], cn, covered, cp, lead+yamlScalar(k)+":", indent)
	}
}

// value emits "head value" for a scalar, or head and the nested lines.
func (b *blamer) value(v any, n *ownership.Node, covered []int, p fieldpath.Path, head, indent string) {
	switch t := v.(type) {
	case map[string]any:
		kind, owners := classify(n, covered, p, len(t) > 0)
		if len(t) == 0 {
			b.add(kind, owners, head+" {}", p)
			return
		}
		b.add(kind, owners, head, p)
		b.mapping(t, n, coverFor(n, covered), p, indent+"  ", indent+"  ")
	case []any:
		kind, owners := classify(n, covered, p, len(t) > 0)
		if len(t) == 0 {
			b.add(kind, owners, head+" []", p)
			return
		}
		b.add(kind, owners, head, p)
		b.list(t, n, coverFor(n, covered), p, indent)
	default:
		kind, owners := classify(n, covered, p, false)
		b.scalar(kind, owners, v, head, indent, p)
	}
}

// scalar emits "head value", or a literal block for a multi-line string,
// with the chomping indicator that keeps the value exact: "|" for one
// trailing newline, "|-" for none, "|+" for more; and an indentation
// indicator when the first line starts with a space.
func (b *blamer) scalar(kind lineKind, owners []int, v any, head, indent string, p fieldpath.Path) {
	s, ok := v.(string)
	if !ok || !strings.Contains(s, "\n") {
		b.add(kind, owners, head+" "+yamlScalar(v), p)
		return
	}
	body, chomp := s, "-"
	if strings.HasSuffix(s, "\n") {
		body, chomp = s[:len(s)-1], ""
		if strings.HasSuffix(body, "\n") {
			chomp = "+"
		}
	}
	ind := ""
	if strings.HasPrefix(body, " ") {
		ind = "2"
	}
	b.add(kind, owners, head+" |"+ind+chomp, p)
	for _, l := range strings.Split(body, "\n") {
		if l == "" {
			b.add(kind, owners, "", p)
			continue
		}
		b.add(kind, owners, indent+"  "+l, p)
	}
}

// list emits list items in the style of kubectl's YAML: "- " at the
// indentation of the parent key.
func (b *blamer) list(l []any, n *ownership.Node, covered []int, p fieldpath.Path, indent string) {
	for i, item := range l {
		pe, cn := n.ItemElement(item, i)
		cp := childPath(p, pe, cn)
		switch t := item.(type) {
		case map[string]any:
			if len(t) == 0 {
				kind, owners := classify(cn, covered, cp, false)
				b.add(kind, owners, indent+"- {}", cp)
				continue
			}
			first := len(b.lines)
			b.mapping(t, cn, coverFor(cn, covered), cp, indent+"- ", indent+"  ")
			// The "- " line also stands for the item itself: its owners
			// (the "." of a keyed item) join those of the first field.
			if cn != nil && len(cn.Owners) > 0 && first < len(b.lines) {
				b.lines[first].owners = unionInts(b.lines[first].owners, cn.Owners)
				b.lines[first].kind = lineOwned
				b.lines[first].item = cp
			}
		case []any:
			kind, owners := classify(cn, covered, cp, len(t) > 0)
			b.add(kind, owners, indent+"-", cp)
			b.list(t, cn, coverFor(cn, covered), cp, indent+"  ")
		default:
			kind, owners := classify(cn, covered, cp, false)
			b.scalar(kind, owners, item, indent+"-", indent, cp)
		}
	}
}

// childPath is p with pe: the trie node's own path where it has one (a
// copy per level would make a deeply nested object cost the square of
// its depth).
func childPath(p fieldpath.Path, pe fieldpath.PathElement, n *ownership.Node) fieldpath.Path {
	if n != nil {
		return n.Path
	}
	// A new slice, sharing p's elements (read only, as the trie's).
	out := make(fieldpath.Path, len(p)+1)
	copy(out, p)
	out[len(p)] = pe
	return out
}

func unionInts(a, b []int) []int {
	seen := map[int]bool{}
	out := make([]int, 0, len(a)+len(b))
	for _, x := range append(append([]int{}, a...), b...) {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	sort.Ints(out)
	return out
}

// BlameAbsent are the owned fields of a report that no line of
// BlameLines shows: a field the object does not hold, as a Secret's
// write-only stringData (stored as data) or a field owned but removed.
func BlameAbsent(r *ownership.Report) []v1alpha1.Field {
	b := &blamer{r: r}
	b.mapping(r.Content, r.Tree, nil, fieldpath.Path{}, "", "")
	shown := &fieldpath.Set{}
	for _, l := range b.lines {
		shown.Insert(l.path)
		if l.item != nil {
			shown.Insert(l.item)
		}
	}
	var out []v1alpha1.Field
	for _, f := range r.Fields {
		if !shown.Has(f.Path.Elements()) {
			out = append(out, f)
		}
	}
	return out
}
