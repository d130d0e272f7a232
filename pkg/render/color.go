package render

import (
	"hash/fnv"
	"io"
	"os"
	"strings"

	"github.com/fatih/color"
	"github.com/moby/term"
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
	return IsTerminal(w)
}

// IsTerminal is printers.IsTerminal that also sees through a writer that
// wraps a file and tells its descriptor (the redacting filter main puts
// over standard output and error).
func IsTerminal(w any) bool {
	if f, ok := w.(interface{ Fd() uintptr }); ok {
		return term.IsTerminal(f.Fd())
	}
	return false
}

// Palette colours text. A nil or disabled Palette returns text unchanged.
//
// Its colour sequences are marked (see Terminal) so that the writer every
// view writes through lets them, and only them, reach the terminal: any
// other escape sequence, in a manager name or a value, is escaped.
type Palette struct {
	enabled  bool
	managers []style
	dim      style
	bold     style
	red      style
	green    style
	yellow   style
}

// style is the marked sequences that turn a colour on and off again.
type style struct{ on, off string }

// NewPalette returns a palette; enabled forces colour on or off regardless
// of the terminal, per colour object.
func NewPalette(enabled bool) *Palette {
	mk := func(attrs ...color.Attribute) style {
		c := color.New(attrs...)
		if !enabled {
			c.DisableColor()
			return style{}
		}
		c.EnableColor()
		on, off, _ := strings.Cut(c.Sprint("\x00"), "\x00")
		return style{on: sgrMark + on, off: sgrMark + off}
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

func (p *Palette) apply(c style, s string) string {
	if p == nil || !p.enabled || s == "" {
		return s
	}
	return c.on + s + c.off
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
