package render_test

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/render"
)

func TestTerminal(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{name: "plain text is untouched", in: "kubectl (Apply) │ image: nginx\n", want: "kubectl (Apply) │ image: nginx\n"},
		{name: "newlines and tabs are the layout", in: "a\tb\nc\n", want: "a\tb\nc\n"},
		{name: "ESC as kubectl writes it", in: "x\x1b[2Jy", want: "x^[[2Jy"},
		{name: "a raw colour is escaped too", in: "\x1b[8mhidden\x1b[0m", want: "^[[8mhidden^[[0m"},
		{name: "carriage return", in: "ok\rFAKE", want: `ok\rFAKE`},
		{name: "bell, backspace, DEL", in: "a\x07b\x08c\x7f", want: `a\u0007b\u0008c\u007f`},
		{name: "C1 CSI", in: "a\u009b2Jb", want: `a\u009b2Jb`},
		{name: "OSC title", in: "\x1b]0;pwned\x07", want: `^[]0;pwned\u0007`},
		{name: "bytes that are not UTF-8", in: "a\xc3(b", want: `a\xc3(b`},
		{name: "a marker byte before anything but a colour is escaped", in: "\xffa\xff\x1b]0;x", want: `\xffa\xff^[]0;x`},
		{name: "unicode stays", in: "äpp │ 😀", want: "äpp │ 😀"},
		{name: "a right-to-left override", in: "\u202egnp.exe", want: `\u202egnp.exe`},
		{name: "isolates, zero-width and the byte order mark", in: "a\u2066b\u2069\u200bc\ufeff", want: `a\u2066b\u2069\u200bc\ufeff`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if _, err := render.Terminal(&b).Write([]byte(tt.in)); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, b.String()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// The palette's colours pass, and text inside them is still escaped.
func TestTerminalPassesThePalette(t *testing.T) {
	p := render.NewPalette(true)
	var b bytes.Buffer
	fmt.Fprint(render.Terminal(&b), p.Red("x\x1b[8my")+p.Dim("z"))
	want := "\x1b[31;1mx^[[8my\x1b[0;22m\x1b[2mz\x1b[22m"
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("(-want +got):\n%q\n%q", want, b.String())
	}
}

// A view escapes what a call site forgot: a table cell with an escape
// sequence never reaches the terminal as one.
func TestTableCellsAreEscapedOnTheWayOut(t *testing.T) {
	tb := &render.Table{Header: []string{"MANAGER"}}
	tb.Add(render.C("evil\x1b]0;title\x07"))
	var b bytes.Buffer
	if err := tb.Write(&b, render.NewPalette(true)); err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(strings.ReplaceAll(b.String(), "\x1b[1m", ""), "\x07") || strings.Contains(b.String(), "\x1b]") {
		t.Errorf("escape sequence reached the output: %q", b.String())
	}
}

func TestError(t *testing.T) {
	var b bytes.Buffer
	render.Error(&b, errors.New("Deployment/shop/web: \"kubectl\" does not own .spec.replicas (owners: \"hpa\" /sc\x1b[2Jale)"))
	want := "error: Deployment/shop/web: \"kubectl\" does not own .spec.replicas (owners: \"hpa\" /sc^[[2Jale)\n"
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	// A newline in a name does not split the one error line.
	b.Reset()
	render.Error(&b, errors.New("ConfigMap/shop/a\nb: not found\tthere"))
	if want := "error: ConfigMap/shop/a\\nb: not found\\tthere\n"; b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}

type suggestions []string

func (suggestions) Error() string           { return `unknown command "audti" for "kubectl ssa"` }
func (s suggestions) Suggestions() []string { return s }

// What the user may have meant follows the error line, a name a line,
// each escaped.
func TestErrorSuggestions(t *testing.T) {
	var b bytes.Buffer
	render.Error(&b, fmt.Errorf("wrapped: %w", suggestions{"audit", "a\x1b[2Jb\nc"}))
	want := "error: wrapped: unknown command \"audti\" for \"kubectl ssa\"\n\nDid you mean this?\n\taudit\n\ta^[[2Jb\\nc\n"
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	b.Reset()
	render.Error(&b, suggestions{})
	if want := "error: unknown command \"audti\" for \"kubectl ssa\"\n"; b.String() != want {
		t.Errorf("no suggestions: got %q, want %q", b.String(), want)
	}
}

func TestShellQuote(t *testing.T) {
	tests := []struct{ in, want string }{
		{in: "kubectl", want: "kubectl"},
		{in: "deployment.apps/web", want: "deployment.apps/web"},
		{in: "", want: "''"},
		{in: "argo cd", want: "'argo cd'"},
		{in: "it's", want: `'it'\''s'`},
		{in: `.metadata.labels["a.b/c"]`, want: `'.metadata.labels["a.b/c"]'`},
		{in: "ci\ndeploy", want: `$'ci\ndeploy'`},
		{in: "it's\tx", want: `$'it\'s\tx'`},
		{in: `a\b` + "\r", want: `$'a\\b\r'`},
		{in: "esc\x1b[2J", want: `$'esc\x1b[2J'`},
		{in: "c1\u009b", want: `$'c1\xc2\x9b'`},
		{in: "bad\xff", want: `$'bad\xff'`},
	}
	for _, tt := range tests {
		if got := render.ShellQuote(tt.in); got != tt.want {
			t.Errorf("shellQuote(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}
