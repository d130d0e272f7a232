package conflict

import (
	"encoding/json"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"k8s.io/kube-openapi/pkg/spec3"
)

// openAPIDoc is the document the parse tests and benchmark read: the
// test data's, or OPENAPI_V3_DOC (e.g. core/v1's, from kubectl get --raw).
func openAPIDoc() string {
	if file := os.Getenv("OPENAPI_V3_DOC"); file != "" {
		return file
	}
	return "testdata/openapi-v3-coordination.k8s.io-v1.json"
}

// componentSchemas reads the same schemas as spec3's own decoding of the
// whole document.
func TestComponentSchemasAsSpec3(t *testing.T) {
	raw, err := os.ReadFile(openAPIDoc())
	if err != nil {
		t.Fatal(err)
	}
	var d spec3.OpenAPI
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatal(err)
	}
	got, err := componentSchemas(raw)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) == 0 || !reflect.DeepEqual(got, d.Components.Schemas) {
		t.Fatalf("componentSchemas read %d schemas, not spec3's %d (or not the same ones)", len(got), len(d.Components.Schemas))
	}
	want, err := convertModels(d.Components.Schemas)
	if err != nil {
		t.Fatal(err)
	}
	p, err := convertModels(got)
	if err != nil {
		t.Fatal(err)
	}
	// The converter's order of types and fields follows a map's:
	// compare them sorted.
	if len(p.Types.Types) == 0 || canonical(t, p) != canonical(t, want) {
		t.Fatal("the converted schemas differ")
	}
}

// canonical is v as JSON, every list of named things sorted by name.
func canonical(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var tree any
	if err := json.Unmarshal(b, &tree); err != nil {
		t.Fatal(err)
	}
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for _, c := range v {
				walk(c)
			}
		case []any:
			for _, c := range v {
				walk(c)
			}
			slices.SortStableFunc(v, func(a, b any) int {
				return strings.Compare(nameOf(a), nameOf(b))
			})
		}
	}
	walk(tree)
	b, _ = json.Marshal(tree)
	return string(b)
}

func nameOf(v any) string {
	m, _ := v.(map[string]any)
	n, _ := m["Name"].(string)
	return n
}

func TestComponentSchemasRefusesBadDocuments(t *testing.T) {
	for name, doc := range map[string]string{
		"truncated":            `{"components": {"schemas": {"a": {"type": "object"`,
		"schemas not a map":    `{"components": {"schemas": []}}`,
		"components not a map": `{"components": "x"}`,
		"bad schema":           `{"components": {"schemas": {"a": {"type": 5}}}}`,
		"not json":             `components`,
	} {
		if m, err := componentSchemas([]byte(doc)); err == nil {
			t.Errorf("%s: read %v, want an error", name, m)
		}
	}
	m, err := componentSchemas([]byte(`{"openapi": "3.0.0", "paths": {"/x": {}}}`))
	if err != nil || m != nil {
		t.Errorf("no components: got %v, %v; want nil, nil", m, err)
	}
}

func BenchmarkParseDocument(b *testing.B) {
	raw, err := os.ReadFile(openAPIDoc())
	if err != nil {
		b.Fatal(err)
	}
	b.Run("components", func(b *testing.B) {
		for b.Loop() {
			if _, err := componentSchemas(raw); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("spec3", func(b *testing.B) {
		for b.Loop() {
			var d spec3.OpenAPI
			if err := json.Unmarshal(raw, &d); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func TestEachMember(t *testing.T) {
	doc := `{"a": 1, "b":{"x":[1,{"y":"}]"}]}, "c\"d": "e\\\"}{", "f": true ,"g":-1.5e3,"h":null,"i":[], "j": {} }`
	var got []string
	if err := eachMember([]byte(doc), func(k string, v []byte) error {
		got = append(got, k+"="+string(v))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	want := []string{`a=1`, `b={"x":[1,{"y":"}]"}]}`, `c"d="e\\\"}{"`, `f=true`, `g=-1.5e3`, `h=null`, `i=[]`, `j={}`}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
	for _, bad := range []string{``, `[]`, `{"a"}`, `{"a":}`, `{"a":1,}`, `{"a":1 "b":2}`, `{"a":"x`, `{"a":{"b":1}`, `{a:1}`} {
		if err := eachMember([]byte(bad), func(string, []byte) error { return nil }); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	if err := eachMember([]byte(` { } `), func(string, []byte) error { t.Error("a member in {}"); return nil }); err != nil {
		t.Error(err)
	}
}
