package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"sigs.k8s.io/yaml"
)

// The published JSON Schemas of the reports (docs/schema, written by make
// schemas): every -o json and -o yaml document a test reads is validated
// against its kind's schema, so the schemas describe what the commands
// really print.
var (
	schemasOnce sync.Once
	schemas     map[string]*jsonschema.Schema
	schemasErr  error
)

func loadSchemas() (map[string]*jsonschema.Schema, error) {
	schemasOnce.Do(func() {
		dir := filepath.Join("..", "..", "docs", "schema")
		files, err := filepath.Glob(filepath.Join(dir, "*.json"))
		if err != nil || len(files) == 0 {
			schemasErr = errors.New("no schemas in " + dir + ": run make schemas")
			return
		}
		schemas = map[string]*jsonschema.Schema{}
		c := jsonschema.NewCompiler()
		c.AssertFormat()
		for _, f := range files {
			s, err := c.Compile(f)
			if err != nil {
				schemasErr = err
				return
			}
			schemas[strings.TrimSuffix(filepath.Base(f), ".json")] = s
		}
	})
	return schemas, schemasErr
}

// outputFormat is the -o of a command line ("" when none).
func outputFormat(args []string) string {
	for i, a := range args {
		switch {
		case (a == "-o" || a == "--output") && i+1 < len(args):
			return args[i+1]
		case strings.HasPrefix(a, "--output="):
			return strings.TrimPrefix(a, "--output=")
		case strings.HasPrefix(a, "-o") && len(a) > 2:
			return strings.TrimPrefix(a, "-o")
		}
	}
	return ""
}

// validateOutput checks every document of a report output against its
// kind's schema: one JSON document, a List of them, JSON lines (watch), or
// YAML documents.
func validateOutput(t *testing.T, format, out string) {
	t.Helper()
	if strings.TrimSpace(out) == "" {
		return
	}
	var docs []any
	switch format {
	case "json":
		dec := json.NewDecoder(strings.NewReader(out))
		dec.UseNumber()
		for {
			var v any
			if err := dec.Decode(&v); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				t.Errorf("-o json is not JSON: %v\n%s", err, out)
				return
			}
			docs = append(docs, v)
		}
	case "yaml":
		for _, part := range strings.Split("\n"+out, "\n---\n") {
			if strings.TrimSpace(part) == "" {
				continue
			}
			b, err := yaml.YAMLToJSON([]byte(part))
			if err != nil {
				t.Errorf("-o yaml is not YAML: %v\n%s", err, out)
				return
			}
			v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			docs = append(docs, v)
		}
	default:
		return
	}
	for _, d := range docs {
		validateDocument(t, d)
	}
}

func validateDocument(t *testing.T, doc any) {
	t.Helper()
	all, err := loadSchemas()
	if err != nil {
		t.Fatal(err)
	}
	m, _ := doc.(map[string]any)
	kind, _ := m["kind"].(string)
	if kind == "List" {
		items, _ := m["items"].([]any)
		for _, it := range items {
			validateDocument(t, it)
		}
		return
	}
	s, ok := all[kind]
	if !ok {
		t.Errorf("a report of kind %q has no published schema", kind)
		return
	}
	if err := s.Validate(doc); err != nil {
		b, _ := json.MarshalIndent(doc, "", "  ")
		t.Errorf("the %s does not match docs/schema/%s.json: %v\n%s", kind, kind, err, b)
	}
}

// TestSchemasValidateWhatTheyShould: a schema refuses a report with an
// unknown field, a missing one, or a value outside its enum.
func TestSchemasRefuseWhatTheyShould(t *testing.T) {
	all, err := loadSchemas()
	if err != nil {
		t.Fatal(err)
	}
	if len(all) < 8 {
		t.Fatalf("%d schemas, want one per report kind", len(all))
	}
	good := `{"apiVersion":"ssa.kubectl-ssa.io/v1alpha1","kind":"Fight","object":{"apiVersion":"v1","kind":"ConfigMap","namespace":"a","name":"b","uid":"u","resourceVersion":"1"},
"path":".data.x","managers":[],"values":[],"flips":3,"since":"2026-11-24T10:00:00Z","last":"2026-11-24T10:01:00Z","perMinute":1.5}`
	parse := func(s string) any {
		v, err := jsonschema.UnmarshalJSON(strings.NewReader(s))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	if err := all["Fight"].Validate(parse(good)); err != nil {
		t.Fatalf("a good Fight is refused: %v", err)
	}
	for name, bad := range map[string]string{
		"unknown field": strings.Replace(good, `"flips":3`, `"flips":3,"extra":1`, 1),
		"missing field": strings.Replace(good, `"flips":3,`, ``, 1),
		"wrong type":    strings.Replace(good, `"flips":3`, `"flips":"3"`, 1),
		"wrong kind":    strings.Replace(good, `"kind":"Fight"`, `"kind":"Fights"`, 1),
	} {
		if err := all["Fight"].Validate(parse(bad)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	var audit map[string]any
	_ = json.Unmarshal([]byte(`{"apiVersion":"ssa.kubectl-ssa.io/v1alpha1","kind":"AuditReport"}`), &audit)
	if err := all["AuditReport"].Validate(audit); err == nil {
		t.Error("an AuditReport without its fields is accepted")
	}
	if _, err := os.Stat(filepath.Join("..", "..", "docs", "schema", "ConflictReport.json")); err != nil {
		t.Error(err)
	}
}
