package render

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/kubectl-ssa/kubectl-ssa/internal/shell"
)

// Everything the views write reaches the terminal through one function,
// escapeTerminal, on the way out (Terminal): a manager name, subresource,
// value or error message holding an escape sequence can't move the cursor,
// retitle the window, hide text or rewrite a line, whichever view or call
// site forgot about it. It escapes as kubectl's printers.EscapeTerminal
// does (ESC as ^[, CR as \r) and, beyond it, every other C0 and C1 control
// character (\u00XX) and bytes that are not UTF-8 (\xNN). Newlines and
// tabs stay: they are the layout. Where a value must stay on one line (a
// table cell, a blame line) Escape also writes \n and \t.
//
// The only sequences that pass are the Palette's colours, which it marks
// with sgrMark, a byte no UTF-8 text has (so no decoded JSON or YAML
// string, which is all a manager name or value can be).
const sgrMark = "\xff"

// Terminal returns w wrapped so that everything written to it is escaped
// for a terminal and the Palette's marked colours become colours. Each
// Write is escaped on its own: write whole strings.
func Terminal(w io.Writer) io.Writer {
	if t, ok := w.(*terminalWriter); ok {
		return t
	}
	return &terminalWriter{w: w}
}

type terminalWriter struct{ w io.Writer }

func (t *terminalWriter) Write(p []byte) (int, error) {
	if _, err := io.WriteString(t.w, escapeTerminal(string(p), true)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Escape makes a user-controlled string safe for a terminal and keeps it on
// one line: as Terminal does, and newlines and tabs as \n and \t. Strings
// without control characters, nearly all of them, are returned as they
// are, without allocating.
func Escape(s string) string { return escapeTerminal(s, false) }

// escaped tells whether a rune is written escaped: a control character,
// except newlines and tabs in multi-line text.
func escaped(r rune, lines bool) bool {
	keep := lines && (r == '\n' || r == '\t')
	return isControl(r) && !keep
}

// escapeTerminal escapes s; lines keeps newlines and tabs, and the
// palette's marked colour sequences.
func escapeTerminal(s string, lines bool) string {
	i := 0
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if escaped(r, lines) || r == utf8.RuneError && size == 1 {
			break
		}
		i += size
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case lines && strings.HasPrefix(s[i:], sgrMark):
			if n := sgrLen(s[i+1:]); n > 0 {
				b.WriteString(s[i+1 : i+1+n])
				i += 1 + n
				continue
			}
			b.WriteString(`\xff`)
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\x1b':
			b.WriteString("^[")
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\n' && !lines:
			b.WriteString(`\n`)
		case r == '\t' && !lines:
			b.WriteString(`\t`)
		case escaped(r, lines):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// sgrLen is the length of the colour sequence (ESC [ digits and ; m) at
// the start of s, or 0.
func sgrLen(s string) int {
	if !strings.HasPrefix(s, "\x1b[") {
		return 0
	}
	for i := 2; i < len(s); i++ {
		switch c := s[i]; {
		case c == 'm':
			return i + 1
		case c != ';' && (c < '0' || c > '9'):
			return 0
		}
	}
	return 0
}

func isControl(r rune) bool {
	return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || invisible(r)
}

// invisible tells whether a rune changes how the text around it shows
// without showing itself: the bidirectional overrides, embeddings and
// isolates that reorder a line ("Trojan Source", U+202E shows
// "\u202egnp.exe" as "exe.png"), the zero-width characters and the byte
// order mark. A name or a value holding one is written escaped, so what
// the terminal shows is what the object holds.
func invisible(r rune) bool {
	switch {
	case r == 0x061c, r == 0xfeff:
		return true
	case r >= 0x200b && r <= 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2060 && r <= 0x2064, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

// Invisible tells whether r changes how the text around it shows without
// showing itself (invisible): the other outputs (a page, a pull
// request's comment) escape it as the terminal views do.
func Invisible(r rune) bool { return invisible(r) }

// Error prints an error for a terminal: "error: " and the message, escaped
// on one line; then, for an error that offers what the user may have meant
// (a mistyped command), "Did you mean this?" and each name on its own
// line, as kubectl prints them, each escaped on its line.
func Error(w io.Writer, err error) {
	t := Terminal(w)
	fmt.Fprintln(t, "error: "+Escape(err.Error()))
	var s suggester
	if errors.As(err, &s) && len(s.Suggestions()) > 0 {
		fmt.Fprintln(t, "\nDid you mean this?")
		for _, name := range s.Suggestions() {
			fmt.Fprintln(t, "\t"+Escape(name))
		}
	}
}

// suggester is an error with the names the user may have meant.
type suggester interface{ Suggestions() []string }

// shellQuote quotes a word for a pasted command (see shell.Quote).
var shellQuote = shell.Quote

// Warning prints a warning for a terminal: "warning: " and the message,
// escaped and kept on one line.
func Warning(w io.Writer, msg string) {
	fmt.Fprintln(Terminal(w), "warning: "+Escape(msg))
}
