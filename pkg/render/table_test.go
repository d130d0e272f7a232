package render_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/render"
)

func TestTableWrite(t *testing.T) {
	upper := func(s string) string { return "<" + strings.ToUpper(s) + ">" }
	tests := []struct {
		name  string
		table render.Table
		color bool
		want  string
	}{
		{
			name: "columns two spaces apart, widths from the longest cell",
			table: render.Table{Header: []string{"A", "BB"}, Rows: [][]render.Cell{
				{render.C("long cell"), render.C("x")},
				{render.C("s"), render.C("yy")},
			}},
			want: "A          BB\nlong cell  x\ns          yy\n",
		},
		{
			name: "multi-byte runes count once",
			table: render.Table{Header: []string{"P", "Q"}, Rows: [][]render.Cell{
				{render.C("ab…"), render.C("1")},
				{render.C("abcd"), render.C("2")},
			}},
			want: "P     Q\nab…   1\nabcd  2\n",
		},
		{
			name: "empty trailing cells leave no trailing spaces",
			table: render.Table{Header: []string{"A", "B", "C"}, Rows: [][]render.Cell{
				{render.C("x"), render.C(""), render.C("")},
				{render.C("y"), render.C(""), render.C("z")},
			}},
			want: "A  B  C\nx\ny     z\n",
		},
		{
			name: "widths come from the plain text, not the coloured one",
			table: render.Table{Header: []string{"NAME", "N"}, Rows: [][]render.Cell{
				{{Text: "ab", Color: upper}, render.C("1")},
				{render.C("abcdef"), render.C("2")},
			}},
			want: "NAME    N\n<AB>      1\nabcdef  2\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := tt.table.Write(&buf, render.NewPalette(tt.color)); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, buf.String()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestEscape(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{name: "plain text is unchanged", in: "kube-controller-manager", want: "kube-controller-manager"},
		{name: "non-ASCII text is unchanged", in: "équipe-ü…", want: "équipe-ü…"},
		{name: "ESC as kubectl writes it", in: "evil\x1b[31mred", want: "evil^[[31mred"},
		{name: "line breaks and tabs stay on one line", in: "a\nb\r\tc", want: `a\nb\r\tc`},
		{name: "other C0 controls", in: "bell\a back\b nul\x00 del\x7f", want: `bell\u0007 back\u0008 nul\u0000 del\u007f`},
		{name: "C1 CSI", in: "x\u009b31my", want: `x\u009b31my`},
		{name: "control after non-ASCII", in: "é\x1b", want: "é^["},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := render.Escape(tt.in); got != tt.want {
				t.Errorf("Escape(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}
