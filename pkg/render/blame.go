package render

import (
	"io"
	"sort"
	"strings"
	"unicode/utf8"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
)

type lineKind int

const (
	lineOwned      lineKind = iota
	lineStructural          // a map or list line whose owned fields are below it
	lineUnowned             // present in the object, owned by nobody
	lineUntracked           // identity and server metadata, never owned
)

type blameLine struct {
	kind   lineKind
	owners []int
	text   string
}

type blamer struct {
	r     *ownership.Report
	lines []blameLine
}

// Blame renders the object's YAML with a gutter naming the owners of each
// line. Shared fields list every co-owner; lines inside an atomic value are
// owned by the atomic value's owners; lines nobody owns say so and are never
// attributed to an ancestor.
func Blame(w io.Writer, r *ownership.Report, o Options) error {
	if err := Header(w, r, o, ""); err != nil {
		return err
	}
	if o.showTime() {
		if err := writeLine(w, o.Palette.Dim("# times are each manager's last write to the object, not when the line changed")); err != nil {
			return err
		}
	}
	b := &blamer{r: r}
	b.mapping(r.Content, r.Tree, nil, fieldpath.Path{}, "", "")

	gutters := make([]string, len(b.lines))
	width := 0
	for i, l := range b.lines {
		switch l.kind {
		case lineOwned:
			gutters[i] = o.plainOwners(ownersOf(r, l.owners))
		case lineUnowned:
			gutters[i] = "(unowned)"
		case lineUntracked:
			gutters[i] = "(not tracked)"
		}
		width = max(width, utf8.RuneCountInString(gutters[i]))
	}
	var sb strings.Builder
	for i, l := range b.lines {
		g := gutters[i]
		pad := strings.Repeat(" ", width-utf8.RuneCountInString(g))
		switch l.kind {
		case lineOwned:
			g = o.colorOwners(ownersOf(r, l.owners))
		default:
			g = o.Palette.Dim(g)
		}
		if l.text == "" {
			// an empty line of a literal block: no trailing space
			sb.WriteString(g + pad + o.Palette.Dim(" │") + "\n")
			continue
		}
		sb.WriteString(g + pad + o.Palette.Dim(" │ ") + Escape(l.text) + "\n")
	}
	_, err := io.WriteString(w, sb.String())
	return err
}

func (b *blamer) add(kind lineKind, owners []int, text string) {
	if kind == lineOwned && len(owners) == 0 {
		kind = lineUnowned
	}
	b.lines = append(b.lines, blameLine{kind: kind, owners: owners, text: text})
}

// classify decides a line's owners: the node's own owners, else those of an
// atomic ancestor (covered); a container with owned descendants is
// structural; anything else is unowned.
func classify(n *ownership.Node, covered []int, p fieldpath.Path, container bool) (lineKind, []int) {
	if ownership.NeverOwned(p.String()) {
		return lineUntracked, nil
	}
	if n != nil && len(n.Owners) > 0 {
		return lineOwned, n.Owners
	}
	if covered != nil {
		return lineOwned, covered
	}
	if container && (n != nil || p.String() == ".metadata") {
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
func (b *blamer) mapping(m map[string]interface{}, n *ownership.Node, covered []int, p fieldpath.Path, first, indent string) {
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
		cp := append(p.Copy(), pe)
		cn := n.Child(pe)
		b.value(m[k], cn, covered, cp, lead+yamlScalar(k)+":", indent)
	}
}

// value emits "head value" for a scalar, or head and the nested lines.
func (b *blamer) value(v interface{}, n *ownership.Node, covered []int, p fieldpath.Path, head, indent string) {
	switch t := v.(type) {
	case map[string]interface{}:
		kind, owners := classify(n, covered, p, len(t) > 0)
		if len(t) == 0 {
			b.add(kind, owners, head+" {}")
			return
		}
		b.add(kind, owners, head)
		b.mapping(t, n, coverFor(n, covered), p, indent+"  ", indent+"  ")
	case []interface{}:
		kind, owners := classify(n, covered, p, len(t) > 0)
		if len(t) == 0 {
			b.add(kind, owners, head+" []")
			return
		}
		b.add(kind, owners, head)
		b.list(t, n, coverFor(n, covered), p, indent)
	default:
		kind, owners := classify(n, covered, p, false)
		b.scalar(kind, owners, v, head, indent)
	}
}

// scalar emits "head value", or a literal block for a multi-line string,
// with the chomping indicator that keeps the value exact: "|" for one
// trailing newline, "|-" for none, "|+" for more; and an indentation
// indicator when the first line starts with a space.
func (b *blamer) scalar(kind lineKind, owners []int, v interface{}, head, indent string) {
	s, ok := v.(string)
	if !ok || !strings.Contains(s, "\n") {
		b.add(kind, owners, head+" "+yamlScalar(v))
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
	b.add(kind, owners, head+" |"+ind+chomp)
	for _, l := range strings.Split(body, "\n") {
		if l == "" {
			b.add(kind, owners, "")
			continue
		}
		b.add(kind, owners, indent+"  "+l)
	}
}

// list emits list items in the style of kubectl's YAML: "- " at the
// indentation of the parent key.
func (b *blamer) list(l []interface{}, n *ownership.Node, covered []int, p fieldpath.Path, indent string) {
	for i, item := range l {
		pe, cn := n.ItemElement(item, i)
		cp := append(p.Copy(), pe)
		switch t := item.(type) {
		case map[string]interface{}:
			if len(t) == 0 {
				kind, owners := classify(cn, covered, cp, false)
				b.add(kind, owners, indent+"- {}")
				continue
			}
			first := len(b.lines)
			b.mapping(t, cn, coverFor(cn, covered), cp, indent+"- ", indent+"  ")
			// The "- " line also stands for the item itself: its owners
			// (the "." of a keyed item) join those of the first field.
			if cn != nil && len(cn.Owners) > 0 && first < len(b.lines) {
				b.lines[first].owners = unionInts(b.lines[first].owners, cn.Owners)
				b.lines[first].kind = lineOwned
			}
		case []interface{}:
			kind, owners := classify(cn, covered, cp, len(t) > 0)
			b.add(kind, owners, indent+"-")
			b.list(t, cn, coverFor(cn, covered), cp, indent+"  ")
		default:
			kind, owners := classify(cn, covered, cp, false)
			b.scalar(kind, owners, item, indent+"-", indent)
		}
	}
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
