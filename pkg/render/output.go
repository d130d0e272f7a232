package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/printers"
)

// The data formats every command's -o takes beside its text views.
const (
	FormatJSON       = "json"
	FormatYAML       = "yaml"
	FormatJSONPath   = "jsonpath"
	FormatGoTemplate = "go-template"
)

// DataFormats are the -o values every command accepts, as kubectl names
// them (the -file forms read the template from a file).
var DataFormats = []string{FormatJSON, FormatYAML, FormatJSONPath + "=...", FormatJSONPath + "-file=...", FormatGoTemplate + "=...", FormatGoTemplate + "-file=..."}

// isTerminal is IsTerminal (a variable for the tests).
var isTerminal = IsTerminal

// Output is a parsed -o: a command's text view, or a data format with
// its template.
type Output struct {
	Name     string
	Template string
}

// ParseOutput reads -o: one of views, or a data format.
func ParseOutput(s string, views []string) (Output, error) {
	for _, v := range views {
		if s == v {
			return Output{Name: s}, nil
		}
	}
	switch s {
	case FormatJSON, FormatYAML:
		return Output{Name: s}, nil
	}
	name, arg, ok := strings.Cut(s, "=")
	if ok {
		switch name {
		case FormatJSONPath, FormatGoTemplate:
			if arg == "" {
				return Output{}, fmt.Errorf("-o %s= needs a template, e.g. -o %s='%s'", name, name, exampleTemplate(name))
			}
			return Output{Name: name, Template: arg}, nil
		case FormatJSONPath + "-file", FormatGoTemplate + "-file":
			b, err := readTemplate(arg)
			if err != nil {
				return Output{}, fmt.Errorf("-o %s: %w", name, err)
			}
			return Output{Name: strings.TrimSuffix(name, "-file"), Template: string(b)}, nil
		}
	}
	return Output{}, fmt.Errorf("--output must be one of %s, not %q", strings.Join(append(append([]string{}, views...), DataFormats...), ", "), s)
}

// MaxTemplateBytes bounds a template file: /dev/zero, or a log given by
// mistake, must not be read until memory runs out.
const MaxTemplateBytes = 1 << 20

// readTemplate reads a template file, up to MaxTemplateBytes.
func readTemplate(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	b, err := io.ReadAll(io.LimitReader(f, MaxTemplateBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if len(b) > MaxTemplateBytes {
		return nil, fmt.Errorf("%s holds more than %d bytes, more than a template needs: give the template's file", path, MaxTemplateBytes)
	}
	return b, nil
}

func exampleTemplate(name string) string {
	if name == FormatJSONPath {
		return "{.kind}"
	}
	return "{{.kind}}"
}

// IsData tells whether the output is data (JSON, YAML or a template over
// the report) rather than a text view.
func (o Output) IsData() bool {
	switch o.Name {
	case FormatJSON, FormatYAML, FormatJSONPath, FormatGoTemplate:
		return true
	}
	return false
}

// Print writes reports as data: a List when asList or when there are
// several, else the one report itself; templates see the same document as
// JSON does, as with kubectl get -o jsonpath.
//
// On a terminal the document is escaped as the text views are: a value
// from the cluster holding ESC, BEL or an OSC sequence (raw in templates'
// output, C1 characters raw in JSON) can't drive the terminal. Piped, the
// bytes are the document's, as kubectl writes them.
func (o Output) Print(w io.Writer, items []any, asList bool) error {
	if isTerminal(w) {
		w = Terminal(w)
	}
	switch o.Name {
	case FormatJSON, FormatYAML:
		return Data(w, o.Name, items, asList)
	}
	var v any = List{APIVersion: "v1", Kind: "List", Items: items}
	if len(items) == 1 && !asList {
		v = items[0]
	}
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	doc := map[string]any{}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return err
	}
	var p printers.ResourcePrinter
	switch o.Name {
	case FormatJSONPath:
		jp, err := printers.NewJSONPathPrinter(o.Template)
		if err != nil {
			return fmt.Errorf("-o jsonpath: %w", err)
		}
		jp.AllowMissingKeys(true)
		p = jp
	case FormatGoTemplate:
		if p, err = printers.NewGoTemplatePrinter([]byte(o.Template)); err != nil {
			return fmt.Errorf("-o go-template: %w", err)
		}
	default:
		return fmt.Errorf("unknown output %q", o.Name)
	}
	return p.PrintObj(&unstructured.Unstructured{Object: doc}, w)
}
