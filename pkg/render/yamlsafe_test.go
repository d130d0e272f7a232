package render

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

// Every string the API can hold is written as YAML that reads back the
// same, in the small and the streamed paths: C1 controls, NEL, DEL, a
// byte order mark and U+FFFE, in values and in keys.
func TestYAMLWritesEveryString(t *testing.T) {
	odd := []string{"<<", "a\n<<: b\n<<: c", strings.Repeat("k", 1500), "\u0080", "a\u0085b", "\u009f", "x\x7fy", "\ufeff", "\ufffe", "\x1b[31mred\x07", "line\r\nbreak", "\u2028", "😀", "plain"}
	for _, s := range odd {
		t.Run(strings.ToValidUTF8(s, "?"), func(t *testing.T) {
			obj := map[string]any{"metadata": map[string]any{"name": s, "annotations": map[string]any{s: s}}}
			for _, size := range []int{4 << 10, 8} { // whole, then streamed member by member
				old := smallJSON
				smallJSON = size
				doc, err := json.Marshal(obj)
				if err != nil {
					t.Fatal(err)
				}
				var buf bytes.Buffer
				err = writeYAML(&buf, doc)
				smallJSON = old
				if err != nil {
					t.Fatalf("smallJSON %d: %v", size, err)
				}
				var back map[string]any
				if err := yaml.Unmarshal(buf.Bytes(), &back); err != nil {
					t.Fatalf("smallJSON %d: the YAML does not read back: %v\n%s", size, err, buf.String())
				}
				if diff := cmp.Diff(obj, back); diff != "" {
					t.Errorf("smallJSON %d: (-want +got)\n%s", size, diff)
				}
			}
		})
	}
}

// Invalid UTF-8 in JSON text becomes U+FFFD, as encoding/json reads it.
func TestJSONToYAMLInvalidUTF8(t *testing.T) {
	b, err := JSONToYAML([]byte("{\"a\":\"x\xffy\"}"))
	if err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	if err := yaml.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if got := back["a"]; got != "x\ufffdy" {
		t.Errorf("got %q", got)
	}
}

// Data printed to a terminal can't drive it: ESC, BEL, CR and C1
// characters from the cluster are escaped in every format; piped, the
// bytes are the document's.
func TestPrintEscapesForTerminal(t *testing.T) {
	item := map[string]any{"kind": "X", "name": "a\x1b]8;;http://x\x07b\u009bc\rd"}
	for _, o := range []Output{{Name: FormatJSON}, {Name: FormatYAML}, {Name: FormatJSONPath, Template: "{.name}"}, {Name: FormatGoTemplate, Template: "{{.name}}"}} {
		for _, tty := range []bool{true, false} {
			old := isTerminal
			isTerminal = func(any) bool { return tty }
			var buf bytes.Buffer
			err := o.Print(&buf, []any{item}, false)
			isTerminal = old
			if err != nil {
				t.Fatalf("%s: %v", o.Name, err)
			}
			raw := strings.ContainsAny(buf.String(), "\x1b\x07\u009b\r")
			if tty && raw {
				t.Errorf("%s on a terminal: control characters written raw: %q", o.Name, buf.String())
			}
			if !tty && !raw && (o.Name == FormatJSONPath || o.Name == FormatGoTemplate) {
				t.Errorf("%s piped: the template's output was changed: %q", o.Name, buf.String())
			}
		}
	}
}

// FuzzYAMLString: any string, as a value and as a key, is written as YAML
// that reads back the same.
func FuzzYAMLString(f *testing.F) {
	for _, s := range []string{"", "plain", "\u0085", "\u0080x", "\x7f", "\ufeff", "\ufffe", "a: b", "- x", "'q'", "\"", "\r\n", "😀"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		s = strings.ToValidUTF8(s, "\ufffd") // as encoding/json reads it
		obj := map[string]any{"k": s, "n": map[string]any{s: s}}
		doc, err := json.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := writeYAML(&buf, doc); err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		var back map[string]any
		if err := yaml.Unmarshal(buf.Bytes(), &back); err != nil {
			t.Fatalf("%q: the YAML does not read back: %v\n%s", s, err, buf.String())
		}
		if diff := cmp.Diff(obj, back); diff != "" {
			t.Fatalf("%q: (-want +got)\n%s", s, diff)
		}
	})
}
