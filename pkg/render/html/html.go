package html

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"hash/fnv"
	"html/template"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/render"
)

//go:embed page
var files embed.FS

// colours is the number of manager colours of the style sheet (.m0 ...).
const colours = 8

var (
	style  = mustRead("page/style.css")
	script = mustRead("page/print.js")
	base   = template.Must(template.New("page").Funcs(funcs).ParseFS(files, "page/page.tmpl"))
)

func mustRead(name string) string {
	b, err := files.ReadFile(name)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// pageOf is the template of one page: the frame and body, the page's
// own.
func pageOf(name string) *template.Template {
	return template.Must(template.Must(base.Clone()).ParseFS(files, "page/"+name))
}

// frame is what every page has around its body.
type frame struct {
	Title   string
	Command string
	CSP     string
	CSS     template.CSS
	Script  template.JS
	Body    any
	// Failed are the run's errors: the page is not the whole answer.
	Failed []string
}

// write writes a page: its body (data of t's "body"), under title, and
// the run's errors (failed) first.
func write(w io.Writer, t *template.Template, title, command string, body any, failed []error) error {
	css := style
	f := frame{
		Title: title, Command: command, Body: body,
		CSS: template.CSS(css), Script: template.JS(script), // our own files, allowed by their hashes
		CSP: "default-src 'none'; style-src " + hash(css) + "; script-src " + hash(script) + "; img-src 'none'; base-uri 'none'; form-action 'none'",
	}
	for _, err := range failed {
		f.Failed = append(f.Failed, err.Error())
	}
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, "page", f); err != nil {
		return err
	}
	_, err := w.Write(visible(buf.Bytes()))
	return err
}

// visible escapes what would not show as itself (control characters,
// the bidirectional and zero-width ones that reorder or hide text) as
// the text views do (render.Escape: "\u202e"), so the page shows what
// the objects hold. Newlines and tabs stay; the page's own text has
// nothing else to escape.
func visible(b []byte) []byte {
	var out []byte
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		keep := r == '\n' || r == '\t' || (r >= 0x20 && r < 0x7f)
		if !keep {
			if e := render.Escape(string(b[i : i+size])); e != string(b[i:i+size]) {
				if out == nil {
					out = append(make([]byte, 0, len(b)+64), b[:i]...)
				}
				out = append(out, e...)
				i += size
				continue
			}
		}
		if out != nil {
			out = append(out, b[i:i+size]...)
		}
		i += size
	}
	if out == nil {
		return b
	}
	return out
}

// hash is a CSP source that allows the inline text s.
func hash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}

var funcs = template.FuncMap{
	"owner":      ownerOf,
	"value":      render.ValueText,
	"utc":        utc,
	"join":       strings.Join,
	"mclass":     managerClass,
	"plural":     plural,
	"resetText":  render.ResetText,
	"op":         op,
	"verdict":    verdictClass,
	"token":      func(s v1alpha1.Severity) string { return token(string(s)) },
	"objectName": objectName,
}

// managerClass is a manager's colour class where no legend numbers the
// managers: stable for its name, as the terminal palette's.
func managerClass(name string) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(name))
	return "m" + string(rune('0'+int(h.Sum32()%colours)))
}

// owner is an owner as the pages name it: its manager, with its colour,
// and what it wrote through.
type owner struct {
	Manager string
	Class   string
	// How is "Apply", "Update /scale".
	How  string
	Time string
}

func ownerOf(o v1alpha1.Owner) owner {
	how := string(o.Operation)
	if o.Subresource != "" {
		how += " /" + string(o.Subresource)
	}
	return owner{Manager: o.Manager, Class: managerClass(o.Manager), How: how, Time: utc(o.Time)}
}

// utc is a time in UTC (RFC 3339), "" when there is none.
func utc(t *metav1.Time) string {
	if t == nil || t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// verdictClass is the class of a line that warns (bad) or not.
func verdictClass(bad bool) string {
	if bad {
		return "warn"
	}
	return "muted"
}
