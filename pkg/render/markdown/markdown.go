// Package markdown writes a run's problems and changes as a pull
// request's comment (GitHub Flavored Markdown): the counts first, then
// every problem (conflicts first) with its owners inline, then one
// collapsible section per object; cut to fit GitHub's 65,536-character
// limit, saying so and counting what was left out. What comes from the
// cluster (names, values, managers, messages) is escaped: it is text,
// never markup, links or HTML.
package markdown

import (
	"fmt"
	"html"
	"io"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/render"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/render/review"
)

// MaxComment is the longest comment GitHub takes, in characters.
const MaxComment = 65536

// reserve is kept from the limit for the note that says what was cut.
const reserve = 4096

// maxValue is the longest value a table cell shows, in characters.
const maxValue = 120

// Marker starts every comment, so that CI can find and update its
// previous one.
const Marker = "<!-- kubectl-ssa -->"

// Options tune the comment.
type Options struct {
	// Limit is the comment's length limit in bytes (0: MaxComment).
	Limit int
}

// Write writes the document as one comment.
func Write(w io.Writer, d *review.Document, opt Options) error {
	limit := opt.Limit
	if limit <= 0 {
		limit = MaxComment
	}
	objects := ordered(d)
	lines := problemLines(objects)
	sections := make([]string, len(objects)) // made as needed
	var b strings.Builder
	b.WriteString(header(d))
	size := b.Len()
	for _, l := range lines {
		size += len(l.text)
	}
	for i := 0; i < len(objects) && size+reserve <= limit; i++ {
		sections[i] = section(d, objects[i])
		size += len(sections[i])
	}
	// Cut, the list of problems takes half of what is left: the sections
	// of the worst objects still show.
	listLimit := limit
	if size+reserve > limit {
		listLimit = b.Len() + (limit-reserve-b.Len())/2
	}
	if len(lines) > 0 {
		b.WriteString("\n#### Problems\n\n")
	}
	listed := 0
	for _, l := range lines {
		if b.Len()+len(l.text)+reserve > listLimit {
			break
		}
		b.WriteString(l.text)
		listed++
	}
	shown := 0
	for i, s := range sections {
		if s == "" {
			s = section(d, objects[i])
		}
		if b.Len()+len(s)+reserve > limit {
			break
		}
		if shown == 0 {
			b.WriteString("\n#### Objects\n")
		}
		b.WriteString(s)
		shown++
	}
	if listed < len(lines) || shown < len(objects) {
		b.WriteString(cutNote(d, objects, lines[listed:], shown))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// ordered is the objects with errors first, then warnings, then the
// others, each group in the report's order.
func ordered(d *review.Document) []review.Object {
	out := slices.Clone(d.Objects)
	slices.SortStableFunc(out, func(a, b review.Object) int { return worst(a) - worst(b) })
	return out
}

// worst ranks an object by its worst problem: 0 error, 1 warning, 2
// note, 3 none.
func worst(o review.Object) int {
	best := 3
	for _, p := range o.Problems {
		best = min(best, rank(p.Level))
	}
	return best
}

func rank(l review.Level) int {
	switch l {
	case review.LevelError:
		return 0
	case review.LevelWarning:
		return 1
	}
	return 2
}

// header is the marker, the title and the counts.
func header(d *review.Document) string {
	c := d.Count()
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n### kubectl ssa %s: %s\n\n", Marker, d.Command, title(d, c))
	if d.Snapshot != "" {
		fmt.Fprintf(&b, "%s\n\n", md(d.Snapshot))
	}
	b.WriteString("| | |\n|---|---:|\n")
	if d.Command == "audit" {
		fmt.Fprintf(&b, "| objects scanned | %d |\n", d.Scanned)
	}
	total := c.Objects
	if d.Command == "audit" {
		total = d.Scanned
	}
	fmt.Fprintf(&b, "| objects with problems | %d of %d |\n", c.WithProblems, total)
	for _, r := range d.Rules {
		if n := c.ByRule[r.ID]; n > 0 {
			fmt.Fprintf(&b, "| %s (%s) | %d |\n", r.ID, r.Level, n)
		}
	}
	if d.Command == "diff" {
		fmt.Fprintf(&b, "| changes | %d |\n", c.Changes)
	}
	for _, u := range d.Unlisted {
		fmt.Fprintf(&b, "\nNot listed: %s\n", md(u))
	}
	return b.String()
}

func title(d *review.Document, c review.Counts) string {
	n := c.ByLevel[review.LevelError] + c.ByLevel[review.LevelWarning] + c.ByLevel[review.LevelNote]
	objects := c.Objects
	if d.Command == "audit" {
		objects = d.Scanned
	}
	if n == 0 {
		return fmt.Sprintf("no problems in %s", plural(objects, "object"))
	}
	var parts []string
	for _, l := range []review.Level{review.LevelError, review.LevelWarning, review.LevelNote} {
		if k := c.ByLevel[l]; k > 0 {
			parts = append(parts, plural(k, string(l)))
		}
	}
	return fmt.Sprintf("%s in %d of %s", strings.Join(parts, ", "), c.WithProblems, plural(objects, "object"))
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// line is one problem's line of the list, with its rule.
type line struct {
	text, rule string
}

// problemLines are every problem, errors first, each with its object,
// field, owners and fix.
func problemLines(objects []review.Object) []line {
	var out []line
	for _, lv := range []review.Level{review.LevelError, review.LevelWarning, review.LevelNote} {
		for _, o := range objects {
			for _, p := range o.Problems {
				if p.Level == lv {
					out = append(out, line{text: problemLine(o, p), rule: p.Rule})
				}
			}
		}
	}
	return out
}

func problemLine(o review.Object, p review.Problem) string {
	var b strings.Builder
	fmt.Fprintf(&b, "- %s **%s** %s", icon(p.Level), md(p.Rule), code(objectName(o)))
	if len(p.Path) > 0 {
		b.WriteString(" " + code(p.Path.String()))
	}
	if len(p.Owners) > 0 {
		owners := make([]string, len(p.Owners))
		for i, m := range p.Owners {
			owners[i] = code(m)
		}
		b.WriteString(", owners " + strings.Join(owners, ", "))
	}
	if o.URI != "" && p.Line > 0 {
		b.WriteString(" (" + md(fmt.Sprintf("%s line %d", o.Source, p.Line)) + ")")
	}
	b.WriteString(": " + md(p.Message))
	if p.Fix != "" {
		b.WriteString("<br>fix: " + code(p.Fix))
	}
	b.WriteString("\n")
	return b.String()
}

// problemItem is a problem in its object's section: its rule, field
// and line (the list above says the rest).
func problemItem(o review.Object, p review.Problem) string {
	s := fmt.Sprintf("- %s %s", icon(p.Level), md(p.Rule))
	if len(p.Path) > 0 {
		s += " " + code(p.Path.String())
	}
	if len(p.Owners) > 0 {
		s += ", " + code(strings.Join(p.Owners, ", "))
	}
	if o.URI != "" && p.Line > 0 {
		s += fmt.Sprintf(" (line %d)", p.Line)
	}
	return s + "\n"
}

func icon(l review.Level) string {
	switch l {
	case review.LevelError:
		return "❌"
	case review.LevelWarning:
		return "⚠️"
	}
	return "ℹ️"
}

func objectName(o review.Object) string {
	if o.Cluster != "" {
		return o.Cluster + ": " + o.Ref.Display()
	}
	return o.Ref.Display()
}

// section is one object's collapsible section: its problems, then what
// the apply changes, with the owners before and after.
func section(d *review.Document, o review.Object) string {
	var b strings.Builder
	var counts []string
	for _, r := range d.Rules {
		n := 0
		for _, p := range o.Problems {
			if p.Rule == r.ID {
				n++
			}
		}
		if n > 0 {
			counts = append(counts, plural(n, r.ID))
		}
	}
	if d.Command == "diff" {
		counts = append(counts, plural(len(o.Changes), "change"))
	}
	if o.Action == v1alpha1.ActionCreate {
		counts = append(counts, "created")
	}
	fmt.Fprintf(&b, "\n<details><summary>%s <code>%s</code>: %s</summary>\n\n", icon(levelOf(o)), htm(objectName(o)), htm(strings.Join(counts, ", ")))
	for _, p := range o.Problems {
		b.WriteString(problemItem(o, p))
	}
	if len(o.Changes) > 0 {
		if len(o.Problems) > 0 {
			b.WriteString("\n")
		}
		b.WriteString("| field | change | before | after | owners before → after |\n|---|---|---|---|---|\n")
		for _, c := range o.Changes {
			fmt.Fprintf(&b, "| %s | %s%s | %s | %s | %s → %s |\n", code(c.Path.String()), c.Change, conflictMark(c), cell(c.Before, c.HasBefore || c.Before != nil), cell(c.After, c.HasAfter || c.After != nil), owners(c.OwnersBefore), owners(c.OwnersAfter))
		}
	}
	if len(o.Problems) == 0 && len(o.Changes) == 0 {
		b.WriteString("Nothing to report.\n")
	}
	b.WriteString("\n</details>\n")
	return b.String()
}

func levelOf(o review.Object) review.Level {
	switch worst(o) {
	case 0:
		return review.LevelError
	case 1:
		return review.LevelWarning
	}
	return review.LevelNote
}

func conflictMark(c v1alpha1.DiffChange) string {
	if c.Conflict {
		return " (conflict: only with --force-conflicts)"
	}
	return ""
}

func cell(v any, present bool) string {
	if !present {
		return ""
	}
	return code(truncate(review.Value(v)))
}

func owners(os []v1alpha1.Owner) string {
	if len(os) == 0 {
		return "nobody"
	}
	out := make([]string, len(os))
	for i, o := range os {
		name := o.Manager
		if o.Subresource != "" {
			name += " (/" + string(o.Subresource) + ")"
		}
		out[i] = code(name)
	}
	return strings.Join(out, ", ")
}

func truncate(s string) string {
	if utf8.RuneCountInString(s) <= maxValue {
		return s
	}
	r := []rune(s)
	return string(r[:maxValue]) + "…"
}

// cutNote says what the comment leaves out: the problems not listed and
// the objects without their section, counted by rule.
func cutNote(d *review.Document, objects []review.Object, unlisted []line, sections int) string {
	byRule := map[string]int{}
	for _, l := range unlisted {
		byRule[l.rule]++
	}
	var parts []string
	for _, r := range d.Rules {
		if n := byRule[r.ID]; n > 0 {
			parts = append(parts, plural(n, r.ID))
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n---\n**Cut to fit GitHub's %d-character comment limit.**", MaxComment)
	if len(unlisted) > 0 {
		fmt.Fprintf(&b, " Not listed above: %s (%s).", plural(len(unlisted), "problem"), strings.Join(parts, ", "))
	}
	if rest := objects[sections:]; len(rest) > 0 {
		withProblems, changes := 0, 0
		for _, o := range rest {
			if len(o.Problems) > 0 {
				withProblems++
			}
			changes += len(o.Changes)
		}
		fmt.Fprintf(&b, " Without their section: %s, %d with problems", plural(len(rest), "object"), withProblems)
		if d.Command == "diff" {
			fmt.Fprintf(&b, ", %s", plural(changes, "change"))
		}
		b.WriteString(".")
	}
	fmt.Fprintf(&b, " Run `kubectl ssa %s` with `-o sarif` or `-o json` for all of it.\n", d.Command)
	return b.String()
}

// code is s as inline code: escaped text in <code>, which neither a
// backtick nor a pipe in s can close.
func code(s string) string { return "<code>" + md(s) + "</code>" }

// markup are the characters that make inline Markdown: emphasis, code,
// links and images, strikethrough, a table cell's end, entities and
// HTML (<, > and & are written as entities).
const markup = "\\`*_[]()!|~{}#"

// md escapes s for Markdown's inline text (a table cell too): markup
// backslashed, <, > and & as entities, line breaks and control
// characters as spaces or U+FFFD, so that nothing in s is markup, a
// link, HTML or the end of a table cell. (What it leaves, a bare URL, is
// shown as the URL it is.)
func md(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '<':
			b.WriteString("&lt;")
		case r == '>':
			b.WriteString("&gt;")
		case r == '&':
			b.WriteString("&amp;")
		case r == '\n' || r == '\r' || r == '\t':
			b.WriteByte(' ')
		case render.Invisible(r):
			// Shown escaped, as the text views show it: a bidi override
			// would reorder the comment's line ("Trojan Source").
			fmt.Fprintf(&b, "\\u%04x", r)
		case unicode.IsControl(r) || r == utf8.RuneError:
			b.WriteRune(utf8.RuneError)
		case strings.ContainsRune(markup, r):
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// htm escapes s for an HTML block (a section's summary line), where
// Markdown is not read: entities only, line breaks as spaces.
func htm(s string) string {
	var b strings.Builder
	for _, r := range strings.NewReplacer("\n", " ", "\r", " ").Replace(s) {
		if render.Invisible(r) {
			fmt.Fprintf(&b, "\\u%04x", r)
			continue
		}
		b.WriteRune(r)
	}
	return html.EscapeString(b.String())
}
