package render

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	yamlv3 "go.yaml.in/yaml/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/pathlang"
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
	// Empty is said when a filter leaves nothing (default "no fields match").
	Empty string
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
func (o Options) OwnerLabel(ow v1alpha1.Owner) string {
	s := Escape(ow.Manager) + " (" + string(ow.Operation)
	if ow.Subresource != "" {
		s += " /" + Escape(string(ow.Subresource))
	}
	if o.showTime() {
		s += ", " + o.FormatTime(ow.Time)
	}
	return s + ")"
}

func (o Options) colorOwners(owners []v1alpha1.Owner) string {
	return joinOwners(owners, ", ", func(ow v1alpha1.Owner) string { return o.Palette.Manager(ow.Manager, o.OwnerLabel(ow)) })
}

func (o Options) plainOwners(owners []v1alpha1.Owner) string {
	return joinOwners(owners, ", ", o.OwnerLabel)
}

// maxOwners is how many owners of one field a line of a view names; the
// others are counted ("+9995 more"). A field that thousands of appliers
// share (the apiserver does not cap them) would otherwise make its line,
// and with the columns' padding every line, as long as all their names:
// a view quadratic in managers. -o json and -o yaml list them all.
const maxOwners = 5

// joinOwners is one text of each owner, the first maxOwners of them and
// a count of the others, joined by sep.
func joinOwners(owners []v1alpha1.Owner, sep string, text func(v1alpha1.Owner) string) string {
	if len(owners) == 1 {
		return text(owners[0])
	}
	n := min(len(owners), maxOwners)
	parts := make([]string, n, n+1)
	for i, ow := range owners[:n] {
		parts[i] = text(ow)
	}
	if more := len(owners) - n; more > 0 {
		parts = append(parts, fmt.Sprintf("+%d more", more))
	}
	return strings.Join(parts, sep)
}

// Header prints the line above an object's view.
func Header(w io.Writer, r *ownership.Report, o Options, what string) error {
	w = Terminal(w) // the one way out: see terminal.go
	obj := r.Object.Display()
	line := fmt.Sprintf("# %s (%s)", Escape(obj), Escape(r.Object.APIVersion))
	if what != "" {
		line += " " + what
	}
	text := o.Palette.Bold(line) + "\n"
	if r.Entries == 0 && len(r.Managers) == 0 {
		text += o.Palette.Yellow("# no managedFields: nothing records who set these fields. The object was written before server-side field tracking, its managedFields were cleared (metadata.managedFields: [{}]), or it was read without them (kubectl get strips them unless --show-managed-fields). The next apply makes before-first-apply the owner of everything.") + "\n"
	}
	_, err := io.WriteString(w, text)
	return err
}

// writeLine writes s and a newline.
func writeLine(w io.Writer, s string) error {
	_, err := io.WriteString(w, s+"\n")
	return err
}

const timeNote = "AGE is each manager's last write to the object, not when the field changed"

// FieldTable renders the default who-owns view: one row per owned path.
func FieldTable(w io.Writer, r *ownership.Report, o Options, unowned bool) error {
	w = Terminal(w) // the one way out: see terminal.go
	hdr := "# " + timeNote
	if !o.showTime() {
		hdr = ""
	}
	if err := Header(w, r, o, ""); err != nil {
		return err
	}
	if hdr != "" {
		if err := writeLine(w, o.Palette.Dim(hdr)); err != nil {
			return err
		}
	}
	t := &Table{Header: []string{"FIELD", "MANAGER", "OPERATION", "SUBRESOURCE"}}
	if o.showTime() {
		t.Header = append(t.Header, "AGE")
	}
	if o.Wide {
		t.Header = append(t.Header, "APIVERSION", "VALUE")
	}
	ncols := len(t.Header)
	cells := make([]Cell, 0, len(r.Fields)*ncols)
	t.Rows = make([][]Cell, 0, len(r.Fields))
	ages := map[*metav1.Time]string{}
	age := func(ow v1alpha1.Owner) string {
		s, ok := ages[ow.Time]
		if !ok {
			s = o.FormatTime(ow.Time)
			ages[ow.Time] = s
		}
		return s
	}
	// Most rows have the same few owner sets: colour each set once.
	colored := o.Palette != nil && o.Palette.enabled
	coloredOwners := map[string]string{}
	colorOf := func(owners []v1alpha1.Owner) func(string) string {
		return func(string) string {
			key := ownerColumn(owners, func(ow v1alpha1.Owner) string { return ow.Manager + "\x00" })
			s, ok := coloredOwners[key]
			if !ok {
				s = joinOwners(owners, ",", func(ow v1alpha1.Owner) string { return o.Palette.Manager(ow.Manager, Escape(ow.Manager)) })
				coloredOwners[key] = s
			}
			return s
		}
	}
	for _, f := range r.Fields {
		mgr := Cell{Text: ownerColumn(f.Owners, managerText)}
		if colored {
			mgr.Color = colorOf(f.Owners)
		}
		row := append(cells[len(cells):],
			C(f.Path.String()),
			mgr,
			C(ownerColumn(f.Owners, operationText)),
			C(ownerColumn(f.Owners, subresourceText)),
		)
		if o.showTime() {
			row = append(row, C(ownerColumn(f.Owners, age)))
		}
		if o.Wide {
			row = append(row, C(ownerColumn(f.Owners, apiVersionText)), C(o.value(f)))
		}
		cells = cells[:len(cells)+len(row)]
		t.Add(row...)
	}
	if unowned {
		for _, p := range r.Unowned {
			row := []Cell{C(p.String()), {Text: "<none>", Color: o.Palette.Dim}, C("-"), C("-")}
			if o.showTime() {
				row = append(row, C("-"))
			}
			if o.Wide {
				v, _ := pathlang.Lookup(r.Content, p.Elements())
				row = append(row, C("-"), C(o.truncate(compactJSON(v))))
			}
			t.Add(row...)
		}
	}
	if len(t.Rows) == 0 {
		return writeLine(w, o.Palette.Dim("("+o.empty()+")"))
	}
	if err := t.Write(w, o.Palette); err != nil {
		return err
	}
	if !unowned && len(r.Unowned) > 0 {
		return writeLine(w, o.Palette.Dim(fmt.Sprintf("# %d unowned path(s) not shown: add --unowned to list them", len(r.Unowned))))
	}
	return nil
}

// ownerColumn is one attribute of a field's owners, joined by commas.
func ownerColumn(owners []v1alpha1.Owner, attr func(v1alpha1.Owner) string) string {
	return joinOwners(owners, ",", attr)
}

func managerText(ow v1alpha1.Owner) string     { return Escape(ow.Manager) }
func operationText(ow v1alpha1.Owner) string   { return string(ow.Operation) }
func subresourceText(ow v1alpha1.Owner) string { return dash(Escape(string(ow.Subresource))) }
func apiVersionText(ow v1alpha1.Owner) string  { return Escape(ow.APIVersion) }

func (o Options) empty() string {
	if o.Empty != "" {
		return o.Empty
	}
	return "no fields match"
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func (o Options) value(f v1alpha1.Field) string {
	if f.Absent {
		return "(absent)"
	}
	if !f.HasValue {
		return ""
	}
	if f.Redacted {
		return v1alpha1.Redacted
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

func compactJSON(v any) string {
	var buf strings.Builder
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // values are shown, not embedded in HTML
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

// ManagerTable renders one row per managedFields entry.
func ManagerTable(w io.Writer, r *ownership.Report, o Options) error {
	w = Terminal(w) // the one way out: see terminal.go
	if err := Header(w, r, o, ""); err != nil {
		return err
	}
	t := &Table{Header: []string{"MANAGER", "OPERATION", "SUBRESOURCE", "APIVERSION"}}
	if o.showTime() {
		t.Header = append(t.Header, "LAST-WRITE")
	}
	t.Header = append(t.Header, "FIELDS")
	for _, m := range r.Managers {
		name := m.Manager
		row := []Cell{
			{Text: Escape(name), Color: func(s string) string { return o.Palette.Manager(name, s) }},
			C(string(m.Operation)), C(dash(Escape(string(m.Subresource)))), C(Escape(m.APIVersion)),
		}
		if o.showTime() {
			row = append(row, C(o.FormatTime(m.Time)))
		}
		row = append(row, C(strconv.Itoa(m.FieldCount)))
		t.Add(row...)
	}
	if len(t.Rows) == 0 {
		return writeLine(w, o.Palette.Dim("(no managers match)"))
	}
	return t.Write(w, o.Palette)
}

// Tree renders the ownership trie, collapsing subtrees one owner set owns.
func Tree(w io.Writer, r *ownership.Report, o Options) error {
	w = Terminal(w) // the one way out: see terminal.go
	if err := Header(w, r, o, ""); err != nil {
		return err
	}
	keep := selected(r)
	var b strings.Builder
	// One prefix buffer, grown and cut back level by level: a string per
	// level would make a deeply nested object cost the square of its depth.
	var prefixBuf []byte
	var visit func(n *ownership.Node)
	visit = func(n *ownership.Node) {
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
			label := Escape(pathlang.ElementString(c.PE))
			owners, count, uniform := uniformSubtree(c)
			b.Write(prefixBuf)
			switch {
			case uniform && count > 1:
				fmt.Fprintf(&b, "%s%s  %s %s\n", branch, label, o.colorOwners(ownersOf(r, owners)),
					o.Palette.Dim(fmt.Sprintf("[all %d owned fields below]", count)))
			case len(c.Owners) > 0:
				fmt.Fprintf(&b, "%s%s  %s\n", branch, label, o.colorOwners(ownersOf(r, c.Owners)))
				prefixBuf = append(prefixBuf, next...)
				visit(c)
				prefixBuf = prefixBuf[:len(prefixBuf)-len(next)]
			default:
				fmt.Fprintf(&b, "%s%s\n", branch, label)
				prefixBuf = append(prefixBuf, next...)
				visit(c)
				prefixBuf = prefixBuf[:len(prefixBuf)-len(next)]
			}
		}
	}
	visit(r.Tree)
	_, err := io.WriteString(w, b.String())
	return err
}

func ownersOf(r *ownership.Report, idx []int) []v1alpha1.Owner {
	out := make([]v1alpha1.Owner, len(idx))
	for i, j := range idx {
		out[i] = r.Owners[j]
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

// selection is the paths a filtered report kept, and the paths above
// them, for the tree.
type selection struct{ set *fieldpath.Set }

func selected(r *ownership.Report) *selection {
	if !r.Filtered {
		return nil
	}
	s := &selection{set: &fieldpath.Set{}}
	for _, f := range r.Fields {
		p := f.Path.Elements()
		for k := len(p); k > 0; k-- {
			if s.set.Has(p[:k]) {
				break
			}
			s.set.Insert(p[:k])
		}
	}
	return s
}

func (s *selection) hasUnder(prefix fieldpath.Path) bool { return s.set.Has(prefix) }

// SortedKeys returns a map's keys in order.
func SortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// yamlScalar formats a scalar as YAML would, on one line: yaml.v3 never
// folds long strings (sigs.k8s.io/yaml folds them at 80 columns, which
// would put a line break inside a blame line).
func yamlScalar(v any) string {
	switch t := v.(type) {
	case string:
		if plainString(t) {
			return t
		}
		if digits(t) {
			// A number's text: yaml.v3 double-quotes it (an env value, a
			// port as a string), without an encoder's cost.
			return `"` + t + `"`
		}
	case int64:
		return strconv.FormatInt(t, 10)
	case bool:
		return strconv.FormatBool(t)
	case nil:
		return "null"
	}
	str, isString := v.(string)
	if isString {
		scalarMemo.Lock()
		out, ok := scalarMemo.m[str]
		scalarMemo.Unlock()
		if ok {
			return out
		}
	}
	b, err := yamlv3.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	out := strings.TrimSuffix(string(b), "\n")
	if isString && len(str) <= 256 {
		scalarMemo.Lock()
		if len(scalarMemo.m) < 4096 {
			scalarMemo.m[str] = out
		}
		scalarMemo.Unlock()
	}
	return out
}

// scalarMemo keeps what yaml.Marshal wrote of the strings plainString
// refuses: an object repeats them ("0", "nginx:1.27", "500m" in every
// container), and each call costs a new encoder.
var scalarMemo = struct {
	sync.Mutex
	m map[string]string
}{m: map[string]string{}}

// plainString tells, conservatively, whether YAML writes s as it is: a
// letter, then letters, digits, ._/- and inner spaces only (so no ": " or
// " #"), and not a word YAML 1.1 or
// 1.2 reads as a bool or null. Most keys and values are such strings, and
// yaml.Marshal costs a new encoder a call.
// digits tells whether s is 1 to 20 ASCII digits.
func digits(s string) bool {
	if s == "" || len(s) > 20 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func plainString(s string) bool {
	if s == "" || len(s) > 256 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case i > 0 && (c >= '0' && c <= '9' || c == '.' || c == '_' || c == '/' || c == '-'):
		case i > 0 && i < len(s)-1 && c == ' ':
		default:
			return false
		}
	}
	switch strings.ToLower(s) {
	case "y", "n", "yes", "no", "on", "off", "true", "false", "null":
		return false
	}
	return true
}

// ViewManagers is who-owns' view of the managers (-o managers), whose
// empty result render words differently.
const ViewManagers = "managers"

// NothingToShow tells whether a filtered report has nothing for a view:
// no fields nor unowned paths, or for the managers view no managers.
func NothingToShow(r *ownership.Report, view string) bool {
	if view == ViewManagers {
		return len(r.Managers) == 0
	}
	return len(r.Fields) == 0 && len(r.Unowned) == 0
}

// NothingShown is the one line that says a filter matched nothing in any
// of the objects of a selection.
func NothingShown(view string, o Options, objects int) string {
	what := o.empty()
	if view == ViewManagers {
		what = "no managers match"
	}
	return fmt.Sprintf("%s, in all %d objects", what, objects)
}
