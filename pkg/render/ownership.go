package render

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
)

// TimeMode is the value of --time.
type TimeMode string

// Time modes.
const (
	TimeRelative TimeMode = "relative"
	TimeAbsolute TimeMode = "absolute"
	TimeNone     TimeMode = "none"
)

// Options are shared by the text views.
type Options struct {
	Time    TimeMode
	Now     time.Time
	Palette *Palette
	// Wide adds apiVersion and value columns to tables.
	Wide bool
	// MaxValueWidth truncates values in tables (0: 60).
	MaxValueWidth int
}

// FormatTime renders an entry's time per the time mode; "-" when absent.
func (o Options) FormatTime(t *metav1.Time) string {
	if t == nil || t.IsZero() {
		return "-"
	}
	switch o.Time {
	case TimeAbsolute:
		return t.UTC().Format(time.RFC3339)
	case TimeNone:
		return ""
	}
	now := o.Now
	if now.IsZero() {
		now = time.Now()
	}
	return duration.HumanDuration(now.Sub(t.Time))
}

func (o Options) showTime() bool { return o.Time != TimeNone }

// OwnerLabel is "manager (Operation[ /subresource][, age])", escaped.
func (o Options) OwnerLabel(ow ownership.Owner) string {
	s := Escape(ow.Manager) + " (" + ow.Operation
	if ow.Subresource != "" {
		s += " /" + Escape(ow.Subresource)
	}
	if o.showTime() {
		s += ", " + o.FormatTime(ow.Time)
	}
	return s + ")"
}

func (o Options) colorOwners(owners []ownership.Owner) string {
	parts := make([]string, len(owners))
	for i, ow := range owners {
		parts[i] = o.Palette.Manager(ow.Manager, o.OwnerLabel(ow))
	}
	return strings.Join(parts, ", ")
}

func (o Options) plainOwners(owners []ownership.Owner) string {
	parts := make([]string, len(owners))
	for i, ow := range owners {
		parts[i] = o.OwnerLabel(ow)
	}
	return strings.Join(parts, ", ")
}

// Header prints the line above an object's view.
func Header(w io.Writer, r *ownership.Report, o Options, what string) {
	obj := ownership.ObjectName(r.Object.Kind, r.Object.Namespace, r.Object.Name)
	line := fmt.Sprintf("# %s (%s)", Escape(obj), Escape(r.Object.APIVersion))
	if what != "" {
		line += " " + what
	}
	fmt.Fprintln(w, o.Palette.Bold(line))
	if len(r.Managers) == 0 {
		fmt.Fprintln(w, o.Palette.Yellow("# no managedFields: nothing records who set these fields. The object was written before server-side field tracking, its managedFields were cleared (metadata.managedFields: [{}]), or it was read without them (kubectl get strips them unless --show-managed-fields). The next apply makes before-first-apply the owner of everything."))
	}
}

const timeNote = "AGE is each manager's last write to the object, not when the field changed"

// FieldTable renders the default who-owns view: one row per owned path.
func FieldTable(w io.Writer, r *ownership.Report, o Options, unowned bool) error {
	hdr := "# " + timeNote
	if !o.showTime() {
		hdr = ""
	}
	Header(w, r, o, "")
	if hdr != "" {
		fmt.Fprintln(w, o.Palette.Dim(hdr))
	}
	t := &Table{Header: []string{"FIELD", "MANAGER", "OPERATION", "SUBRESOURCE"}}
	if o.showTime() {
		t.Header = append(t.Header, "AGE")
	}
	if o.Wide {
		t.Header = append(t.Header, "APIVERSION", "VALUE")
	}
	for _, f := range r.Fields {
		var mgr, op, sub, age, av []string
		for _, ow := range f.Owners {
			mgr = append(mgr, Escape(ow.Manager))
			op = append(op, ow.Operation)
			sub = append(sub, dash(Escape(ow.Subresource)))
			age = append(age, o.FormatTime(ow.Time))
			av = append(av, Escape(ow.APIVersion))
		}
		owners := f.Owners
		row := []Cell{
			C(ownership.DisplayPath(f.PathElements)),
			{Text: strings.Join(mgr, ","), Color: func(string) string {
				parts := make([]string, len(owners))
				for i, ow := range owners {
					parts[i] = o.Palette.Manager(ow.Manager, Escape(ow.Manager))
				}
				return strings.Join(parts, ",")
			}},
			C(strings.Join(op, ",")),
			C(strings.Join(sub, ",")),
		}
		if o.showTime() {
			row = append(row, C(strings.Join(age, ",")))
		}
		if o.Wide {
			row = append(row, C(strings.Join(av, ",")), C(o.value(f)))
		}
		t.Add(row...)
	}
	if unowned {
		for _, p := range r.UnownedPaths {
			row := []Cell{C(ownership.DisplayPath(p)), {Text: "<none>", Color: o.Palette.Dim}, C("-"), C("-")}
			if o.showTime() {
				row = append(row, C("-"))
			}
			if o.Wide {
				v, _ := ownership.Lookup(r.Content, p)
				row = append(row, C("-"), C(o.truncate(compactJSON(v))))
			}
			t.Add(row...)
		}
	}
	if len(t.Rows) == 0 {
		fmt.Fprintln(w, o.Palette.Dim("(no fields match)"))
		return nil
	}
	if err := t.Write(w, o.Palette); err != nil {
		return err
	}
	if !unowned && len(r.Unowned) > 0 {
		fmt.Fprintln(w, o.Palette.Dim(fmt.Sprintf("# %d unowned path(s) not shown: add --unowned to list them", len(r.Unowned))))
	}
	return nil
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func (o Options) value(f ownership.Field) string {
	if !f.HasValue {
		return ""
	}
	if f.Redacted {
		return ownership.Redacted
	}
	return o.truncate(compactJSON(f.Value))
}

func (o Options) truncate(s string) string {
	limit := o.MaxValueWidth
	if limit == 0 {
		limit = 60
	}
	s = Escape(s)
	if r := []rune(s); len(r) > limit {
		return string(r[:limit-1]) + "…"
	}
	return s
}

func compactJSON(v interface{}) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// ManagerTable renders one row per managedFields entry.
func ManagerTable(w io.Writer, r *ownership.Report, o Options) error {
	Header(w, r, o, "")
	t := &Table{Header: []string{"MANAGER", "OPERATION", "SUBRESOURCE", "APIVERSION"}}
	if o.showTime() {
		t.Header = append(t.Header, "LAST-WRITE")
	}
	t.Header = append(t.Header, "FIELDS")
	for _, m := range r.Managers {
		name := m.Manager
		row := []Cell{
			{Text: Escape(name), Color: func(s string) string { return o.Palette.Manager(name, s) }},
			C(m.Operation), C(dash(Escape(m.Subresource))), C(Escape(m.APIVersion)),
		}
		if o.showTime() {
			row = append(row, C(o.FormatTime(m.Time)))
		}
		row = append(row, C(strconv.Itoa(m.FieldCount)))
		t.Add(row...)
	}
	if len(t.Rows) == 0 {
		fmt.Fprintln(w, o.Palette.Dim("(no managers match)"))
		return nil
	}
	return t.Write(w, o.Palette)
}

// Tree renders the ownership trie, collapsing subtrees one owner set owns.
func Tree(w io.Writer, r *ownership.Report, o Options) error {
	Header(w, r, o, "")
	keep := selected(r)
	var b strings.Builder
	var visit func(n *ownership.Node, prefix string)
	visit = func(n *ownership.Node, prefix string) {
		children := make([]*ownership.Node, 0, len(n.Children))
		for _, c := range n.Children {
			if keep == nil || keep.hasUnder(c.Path) {
				children = append(children, c)
			}
		}
		for i, c := range children {
			last := i == len(children)-1
			branch, next := "├── ", "│   "
			if last {
				branch, next = "└── ", "    "
			}
			label := Escape(ownership.DisplayElement(c.PE))
			owners, count, uniform := uniformSubtree(c)
			switch {
			case uniform && count > 1:
				fmt.Fprintf(&b, "%s%s%s  %s %s\n", prefix, branch, label, o.colorOwners(ownersOf(r, owners)),
					o.Palette.Dim(fmt.Sprintf("[whole subtree, %d fields]", count)))
			case len(c.Owners) > 0:
				fmt.Fprintf(&b, "%s%s%s  %s\n", prefix, branch, label, o.colorOwners(ownersOf(r, c.Owners)))
				visit(c, prefix+next)
			default:
				fmt.Fprintf(&b, "%s%s%s\n", prefix, branch, label)
				visit(c, prefix+next)
			}
		}
	}
	visit(r.Tree, "")
	_, err := io.WriteString(w, b.String())
	return err
}

func ownersOf(r *ownership.Report, idx []int) []ownership.Owner {
	out := make([]ownership.Owner, len(idx))
	for i, j := range idx {
		out[i] = r.Managers[j].Owner
	}
	return out
}

// uniformSubtree tells whether every owned node at or below n has the same
// owners, and how many owned nodes there are.
func uniformSubtree(n *ownership.Node) ([]int, int, bool) {
	var owners []int
	count, uniform := 0, true
	check := func(m *ownership.Node) {
		if len(m.Owners) == 0 {
			return
		}
		count++
		if owners == nil {
			owners = m.Owners
		} else if !sameInts(owners, m.Owners) {
			uniform = false
		}
	}
	check(n)
	n.Walk(check)
	return owners, count, uniform && count > 0
}

func sameInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// selection is the set of paths a filtered report kept, for the tree.
type selection struct{ paths []fieldpath.Path }

func selected(r *ownership.Report) *selection {
	total := 0
	r.Tree.Walk(func(n *ownership.Node) {
		if len(n.Owners) > 0 {
			total++
		}
	})
	if total == len(r.Fields) {
		return nil
	}
	s := &selection{}
	for _, f := range r.Fields {
		s.paths = append(s.paths, f.PathElements)
	}
	return s
}

func (s *selection) hasUnder(prefix fieldpath.Path) bool {
	for _, p := range s.paths {
		if len(p) >= len(prefix) && p[:len(prefix)].Equals(prefix) {
			return true
		}
	}
	return false
}

// SortedKeys returns a map's keys in order.
func SortedKeys(m map[string]interface{}) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// yamlScalar formats a scalar as YAML would.
func yamlScalar(v interface{}) string {
	b, err := yaml.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSuffix(string(b), "\n")
}
