package html

import (
	"fmt"
	"io"
	"strings"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/render"
)

var ownersPage = pageOf("owners.tmpl")

// foldLines is how many lines below a line make it a section that
// folds: a container, the pod template, a long list; not every map.
const foldLines = 12

// OwnersOptions tune WhoOwns.
type OwnersOptions struct {
	// Empty is said of an object a filter leaves nothing of ("": no
	// fields match).
	Empty string
	// Unmatched is how many more objects were read that a filter left
	// nothing of: they are not shown, the page counts them.
	Unmatched int
}

// WhoOwns writes the ownership of objects (who-owns -o html): each
// object's YAML with every line's owners, a legend of its managers,
// its shared fields and the paths nobody owns. failed are the objects
// that could not be read: the page says it is incomplete.
func WhoOwns(w io.Writer, reports []*ownership.Report, o OwnersOptions, failed ...error) error {
	if o.Empty == "" {
		o.Empty = "no fields match"
	}
	objs := make([]ownersObject, len(reports))
	for i, r := range reports {
		objs[i] = ownersOf(r, fmt.Sprintf("o%d", i+1))
	}
	title := "Who owns the fields of " + plural(len(objs), "object")
	if len(objs) == 1 {
		title = "Who owns the fields of " + objs[0].Name
	}
	return write(w, ownersPage, title, "who-owns", ownersBody{Objects: objs, Empty: o.Empty, Unmatched: o.Unmatched}, failed)
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

type ownersBody struct {
	Objects   []ownersObject
	Empty     string
	Unmatched int
}

// ownersObject is one object's section.
type ownersObject struct {
	ID, Name, APIVersion string
	// NoManagedFields: the object has no managedFields entry.
	NoManagedFields bool
	// Filtered: a filter chose the fields shown; NoMatch: it kept none.
	Filtered, NoMatch bool
	Legend            []legendRow
	Lines             []*line
	Fields, Unowned   int
	Shared            []v1alpha1.Field
	UnownedPaths      []string
	// Absent are the owned fields no line shows: the object does not
	// hold them.
	Absent []v1alpha1.Field
}

// legendRow is one manager (managedFields entry) of the legend.
type legendRow struct {
	Marker int
	Class  string
	v1alpha1.Owner
	Time   string
	Fields string
}

// line is one YAML line with its owners' markers; a line with many
// below it folds (Children).
type line struct {
	Text     string
	Kind     string
	Class    string
	Marks    []legendRow
	Shared   bool
	Fold     bool
	Children []*line
	// fold counts the lines below, while nest runs.
	fold *int
}

func ownersOf(r *ownership.Report, id string) ownersObject {
	o := ownersObject{ID: id, Name: r.Object.Display(), APIVersion: r.Object.APIVersion, NoManagedFields: r.Entries == 0 && len(r.Managers) == 0, Filtered: r.Filtered}
	counts := map[string]int{}
	for _, m := range r.Managers {
		counts[key(m.Owner)] = m.FieldCount
	}
	index := map[string]int{}
	for i, ow := range r.Owners {
		index[key(ow)] = i
		row := legendRow{Marker: i + 1, Class: fmt.Sprintf("m%d", i%colours), Owner: ow, Time: utc(ow.Time), Fields: "-"}
		if n, ok := counts[key(ow)]; ok {
			row.Fields = fmt.Sprint(n)
		}
		o.Legend = append(o.Legend, row)
	}
	lines, filtered := render.BlameLines(r)
	o.NoMatch = filtered && len(lines) == 0
	flat := make([]*line, len(lines))
	for i, l := range lines {
		flat[i] = o.lineOf(l, index)
	}
	o.Lines = nest(flat, lines)
	o.Fields = len(r.Fields)
	for _, f := range r.Fields {
		if len(f.Owners) > 1 {
			o.Shared = append(o.Shared, f)
		}
	}
	o.Absent = render.BlameAbsent(r)
	o.Unowned = len(r.Unowned)
	for _, p := range r.Unowned {
		o.UnownedPaths = append(o.UnownedPaths, p.String())
	}
	return o
}

// key is an owner's identity with its apiVersion: one managedFields
// entry.
func key(o v1alpha1.Owner) string { return o.Identity() + "\x00" + o.APIVersion }

func (o *ownersObject) lineOf(l render.BlameLine, index map[string]int) *line {
	out := &line{Text: l.Text}
	switch l.Kind {
	case render.LineOwned:
		out.Kind = "owned"
		for _, ow := range l.Owners {
			out.Marks = append(out.Marks, o.Legend[index[key(ow)]])
		}
		out.Shared = len(l.Owners) > 1
		if len(out.Marks) > 0 {
			out.Class = "o" + strings.TrimPrefix(out.Marks[0].Class, "m")
		}
	case render.LineUnowned:
		out.Kind = "unowned"
	case render.LineUntracked:
		out.Kind = "untracked"
	default:
		out.Kind = "structural"
	}
	return out
}

// nest hangs each line under the nearest line above it that is less
// indented (a list item's "- " one column more than its key), as YAML
// reads them; an empty line of a literal block goes with its block.
// Lines with foldLines or more below them fold.
func nest(flat []*line, lines []render.BlameLine) []*line {
	var roots []*line
	type open struct {
		l     *line
		depth int
		size  *int
	}
	var stack []open
	for i, l := range flat {
		d := depth(lines[i].Text)
		for len(stack) > 0 && stack[len(stack)-1].depth >= d {
			stack = stack[:len(stack)-1]
		}
		if len(stack) == 0 {
			roots = append(roots, l)
		} else {
			parent := stack[len(stack)-1].l
			parent.Children = append(parent.Children, l)
		}
		for _, s := range stack {
			*s.size++
		}
		stack = append(stack, open{l: l, depth: d, size: new(int)})
		l.fold = stack[len(stack)-1].size
	}
	for _, l := range flat {
		l.Fold = *l.fold >= foldLines
	}
	return roots
}

// depth is a line's indentation; "- " counts one column more than the
// key it is under, and an empty line (of a literal block) is deeper than
// any.
func depth(text string) int {
	if text == "" {
		return 1 << 30
	}
	n := len(text) - len(strings.TrimLeft(text, " "))
	if strings.HasPrefix(text[n:], "-") {
		n++
	}
	return n
}
