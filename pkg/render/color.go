package render

import (
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"strings"

	"github.com/fatih/color"
	"k8s.io/cli-runtime/pkg/printers"
)

// ColorMode is the value of --color.
type ColorMode string

// Colour modes.
const (
	ColorAuto   ColorMode = "auto"
	ColorAlways ColorMode = "always"
	ColorNever  ColorMode = "never"
)

// UseColor resolves a colour mode for a writer: auto means a terminal,
// TERM other than dumb, and no NO_COLOR.
func UseColor(mode ColorMode, w io.Writer) bool {
	switch mode {
	case ColorAlways:
		return true
	case ColorNever:
		return false
	}
	if os.Getenv("NO_COLOR") != "" || os.Getenv("TERM") == "dumb" {
		return false
	}
	return printers.IsTerminal(w)
}

// Palette colours text. A nil or disabled Palette returns text unchanged.
type Palette struct {
	enabled  bool
	managers []*color.Color
	dim      *color.Color
	bold     *color.Color
	red      *color.Color
	green    *color.Color
	yellow   *color.Color
}

// NewPalette returns a palette; enabled forces colour on or off regardless
// of the terminal, per colour object.
func NewPalette(enabled bool) *Palette {
	mk := func(attrs ...color.Attribute) *color.Color {
		c := color.New(attrs...)
		if enabled {
			c.EnableColor()
		} else {
			c.DisableColor()
		}
		return c
	}
	p := &Palette{enabled: enabled}
	for _, a := range []color.Attribute{color.FgCyan, color.FgMagenta, color.FgYellow, color.FgGreen, color.FgBlue, color.FgHiRed, color.FgHiCyan, color.FgHiMagenta, color.FgHiYellow, color.FgHiGreen, color.FgHiBlue} {
		p.managers = append(p.managers, mk(a))
	}
	p.dim = mk(color.Faint)
	p.bold = mk(color.Bold)
	p.red = mk(color.FgRed, color.Bold)
	p.green = mk(color.FgGreen)
	p.yellow = mk(color.FgYellow)
	return p
}

func (p *Palette) apply(c *color.Color, s string) string {
	if p == nil || !p.enabled || s == "" {
		return s
	}
	return c.Sprint(s)
}

// Manager colours a manager name with its stable colour.
func (p *Palette) Manager(name, text string) string {
	if p == nil || !p.enabled {
		return text
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(name))
	return p.apply(p.managers[int(h.Sum32())%len(p.managers)], text)
}

// Dim, Bold, Red, Green and Yellow colour text.
func (p *Palette) Dim(s string) string    { return p.apply(p.dim, s) }
func (p *Palette) Bold(s string) string   { return p.apply(p.bold, s) }
func (p *Palette) Red(s string) string    { return p.apply(p.red, s) }
func (p *Palette) Green(s string) string  { return p.apply(p.green, s) }
func (p *Palette) Yellow(s string) string { return p.apply(p.yellow, s) }

// Escape makes a user-controlled string safe for a terminal and keeps it on
// one line: ESC becomes ^[ (as kubectl's printers.EscapeTerminal writes
// it), newlines, carriage returns and tabs \n, \r and \t, and every other
// C0 or C1 control character (backspace, bell, the one-byte CSI U+009B,
// ...) \u00XX. Strings without control characters, nearly all of them,
// are returned as they are, without allocating.
func Escape(s string) string {
	i := strings.IndexFunc(s, isControl)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for _, r := range s[i:] {
		switch {
		case r == '\x1b':
			b.WriteString("^[")
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case isControl(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) }
