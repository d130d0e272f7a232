package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// List wraps several reports.
type List struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Items      []any  `json:"items"`
}

// Data writes reports as JSON or YAML: a List when asList or when there
// are several, else the one report itself. Field names are stable across
// commands.
func Data(w io.Writer, format string, items []any, asList bool) error {
	if format == FormatYAML {
		return dataYAML(w, items, asList)
	}
	var v any = List{APIVersion: "v1", Kind: "List", Items: items}
	if len(items) == 1 && !asList {
		v = items[0]
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	if format != FormatJSON {
		return fmt.Errorf("unknown data format %q", format)
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// dataYAML writes the YAML of Data's JSON, one item at a time (see
// yaml.go): a List's keys sort as items, kind.
func dataYAML(w io.Writer, items []any, asList bool) error {
	encode := func(v any) ([]byte, error) {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		err := enc.Encode(v)
		return buf.Bytes(), err
	}
	if len(items) == 1 && !asList {
		b, err := encode(items[0])
		if err != nil {
			return err
		}
		return writeYAML(w, b)
	}
	if len(items) == 0 {
		_, err := io.WriteString(w, "apiVersion: v1\nitems: []\nkind: List\n")
		return err
	}
	if _, err := io.WriteString(w, "apiVersion: v1\nitems:\n"); err != nil {
		return err
	}
	y := &yamlWriter{w: w}
	for _, it := range items {
		b, err := encode(it)
		if err != nil {
			return err
		}
		if err := y.item(bytes.TrimSpace(b), 0); err != nil {
			return err
		}
	}
	_, err := io.WriteString(w, "kind: List\n")
	return err
}
