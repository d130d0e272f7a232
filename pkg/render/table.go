package render

import (
	"io"
	"strings"
	"unicode/utf8"
)

// Cell is a table cell: plain text (used for widths) and how to colour it.
type Cell struct {
	Text  string
	Color func(string) string
}

// C makes a plain cell.
func C(text string) Cell { return Cell{Text: text} }

// Table writes aligned columns, two spaces apart, like kubectl's tables.
// Widths are taken from the plain text, so colour never breaks alignment.
type Table struct {
	Header []string
	Rows   [][]Cell
}

// Add appends a row.
func (t *Table) Add(cells ...Cell) { t.Rows = append(t.Rows, cells) }

// Write prints the table.
func (t *Table) Write(w io.Writer, p *Palette) error {
	w = Terminal(w) // the one way out: see terminal.go
	widths := make([]int, len(t.Header))
	for i, h := range t.Header {
		widths[i] = utf8.RuneCountInString(h)
	}
	for _, r := range t.Rows {
		for i, c := range r {
			if i < len(widths) {
				widths[i] = max(widths[i], utf8.RuneCountInString(c.Text))
			}
		}
	}
	// The text is built in one buffer sized for it, then written at once.
	size := len(widths) + 1
	for _, wd := range widths {
		size += wd + 2
	}
	var b strings.Builder
	b.Grow(size * (len(t.Rows) + 1))
	line := func(cells []Cell) {
		// Empty cells at the end of a row get no padding, so no line
		// ends in spaces.
		last := len(cells) - 1
		for last > 0 && cells[last].Text == "" {
			last--
		}
		for i, c := range cells[:last+1] {
			if c.Color != nil {
				b.WriteString(c.Color(c.Text))
			} else {
				b.WriteString(c.Text)
			}
			if i < last {
				pad(&b, widths[i]-utf8.RuneCountInString(c.Text)+2)
			}
		}
		b.WriteByte('\n')
	}
	if len(t.Header) > 0 {
		hdr := make([]Cell, len(t.Header))
		for i, h := range t.Header {
			hdr[i] = Cell{Text: h, Color: p.Bold}
		}
		line(hdr)
	}
	for _, r := range t.Rows {
		line(r)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

const spaces = "                                                                "

func pad(b *strings.Builder, n int) {
	for n > 0 {
		k := min(n, len(spaces))
		b.WriteString(spaces[:k])
		n -= k
	}
}
