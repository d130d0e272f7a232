package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"sigs.k8s.io/yaml"
)

// List wraps several reports.
type List struct {
	APIVersion string        `json:"apiVersion"`
	Kind       string        `json:"kind"`
	Items      []interface{} `json:"items"`
}

// Data writes reports as JSON or YAML: a List when asList or when there
// are several, else the one report itself. Field names are stable across
// commands.
func Data(w io.Writer, format string, items []interface{}, asList bool) error {
	var v interface{} = List{APIVersion: "v1", Kind: "List", Items: items}
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
	b := buf.Bytes()
	var err error
	switch format {
	case "json":
		_, err = w.Write(b)
	case "yaml":
		b, err = yaml.JSONToYAML(b)
		if err == nil {
			_, err = w.Write(b)
		}
	default:
		err = fmt.Errorf("unknown data format %q", format)
	}
	return err
}

// IsData tells whether an output format is JSON or YAML.
func IsData(format string) bool { return format == "json" || format == "yaml" }
