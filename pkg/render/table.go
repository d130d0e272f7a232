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
	var b strings.Builder
	line := func(cells []Cell) {
		for i, c := range cells {
			text := c.Text
			if c.Color != nil {
				text = c.Color(text)
			}
			b.WriteString(text)
			if i < len(cells)-1 {
				b.WriteString(strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c.Text)+2))
			}
		}
		b.WriteString("\n")
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
