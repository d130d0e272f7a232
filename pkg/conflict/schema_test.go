package conflict

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	yaml "go.yaml.in/yaml/v2"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/validation/spec"
	smdschema "sigs.k8s.io/structured-merge-diff/v6/schema"
)

// smallModels covers what schemaconv turns into distinct schema elements:
// structs, references, granular and atomic maps, associative lists keyed
// on one and on two fields, sets, atomic lists, int-or-string, unknown
// fields, unions, and defaults of each JSON type.
func smallModels(t *testing.T) map[string]*spec.Schema {
	t.Helper()
	const doc = `{
  "io.example.v1.Widget": {
    "type": "object",
    "x-kubernetes-group-version-kind": [{"group": "example.com", "version": "v1", "kind": "Widget"}],
    "properties": {
      "apiVersion": {"type": "string"},
      "kind": {"type": "string"},
      "metadata": {"$ref": "#/components/schemas/io.example.v1.Meta", "default": {}},
      "spec": {"$ref": "#/components/schemas/io.example.v1.Spec", "default": {}}
    }
  },
  "io.example.v1.Meta": {
    "type": "object",
    "properties": {
      "name": {"type": "string", "default": ""},
      "labels": {"type": "object", "additionalProperties": {"type": "string", "default": ""}},
      "finalizers": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set"}
    }
  },
  "io.example.v1.Spec": {
    "type": "object",
    "properties": {
      "replicas": {"type": "integer", "format": "int32", "default": 1},
      "ratio": {"type": "number", "default": 0.5},
      "paused": {"type": "boolean", "default": false},
      "selector": {"type": "object", "x-kubernetes-map-type": "atomic", "properties": {"matchLabels": {"type": "object", "additionalProperties": {"type": "string"}}}},
      "port": {"x-kubernetes-int-or-string": true},
      "args": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "atomic"},
      "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
      "ports": {
        "type": "array",
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["containerPort", "protocol"],
        "items": {"type": "object", "properties": {
          "containerPort": {"type": "integer", "default": 0},
          "protocol": {"type": "string", "default": "TCP"},
          "name": {"type": "string"}
        }}
      },
      "containers": {
        "type": "array",
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["name"],
        "items": {"$ref": "#/components/schemas/io.example.v1.Container", "default": {}}
      },
      "source": {
        "type": "object",
        "x-kubernetes-unions": [{"discriminator": "type", "fields-to-discriminateBy": {"git": "Git", "url": "URL"}}],
        "properties": {"type": {"type": "string"}, "git": {"type": "string"}, "url": {"type": "string"}}
      }
    }
  },
  "io.example.v1.Container": {
    "type": "object",
    "required": ["name"],
    "properties": {
      "name": {"type": "string", "default": ""},
      "env": {"type": "array", "items": {"type": "object", "properties": {"name": {"type": "string"}}}}
    }
  }
}`
	var models map[string]*spec.Schema
	if err := json.Unmarshal([]byte(doc), &models); err != nil {
		t.Fatal(err)
	}
	return models
}

// realModels reads an OpenAPI v3 document the test bed's apiserver served
// (see testdata/README.md).
func realModels(t *testing.T, file string) map[string]*spec.Schema {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	var d spec3.OpenAPI
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	if d.Components == nil || len(d.Components.Schemas) == 0 {
		t.Fatalf("%s has no component schemas", file)
	}
	return d.Components.Schemas
}

// withoutDefaults drops every default, to tell a difference in defaults
// from any other.
func withoutDefaults(models func(*testing.T) map[string]*spec.Schema) func(*testing.T) map[string]*spec.Schema {
	return func(t *testing.T) map[string]*spec.Schema {
		m := models(t)
		var strip func(s *spec.Schema)
		strip = func(s *spec.Schema) {
			if s == nil {
				return
			}
			s.Default = nil
			for k, p := range s.Properties {
				strip(&p)
				s.Properties[k] = p
			}
			if s.Items != nil {
				strip(s.Items.Schema)
			}
			if s.AdditionalProperties != nil {
				strip(s.AdditionalProperties.Schema)
			}
		}
		for _, s := range m {
			strip(s)
		}
		return m
	}
}

// roundTrip writes a converted schema to the disk cache and reads it back,
// as Loader does.
func roundTrip(t *testing.T, orig *gvSchema) *gvSchema {
	t.Helper()
	b, err := encodeCache(orig)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), cacheName(schema.GroupVersion{Group: "example.com", Version: "v1"}, "/openapi/v3/apis/example.com/v1?hash=ABC"))
	if err := writeAtomic(file, b); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	back, err := decodeCache(raw)
	if err != nil {
		t.Fatal(err)
	}
	return back
}

func checkSameTypes(t *testing.T, orig, back *smdschema.Schema) {
	t.Helper()
	if orig.Equals(back) {
		return
	}
	if len(orig.Types) != len(back.Types) {
		t.Fatalf("%d types written, %d read", len(orig.Types), len(back.Types))
	}
	for i := range orig.Types {
		if !orig.Types[i].Equals(&back.Types[i]) {
			t.Fatalf("type %s differs after the round trip: %s", orig.Types[i].Name, describeDiff(orig.Types[i], back.Types[i]))
		}
	}
	t.Fatal("schemas differ after the round trip")
}

// The disk cache must give back exactly the schema it was given: the
// types (structured-merge-diff's Equals) and the kind index.
func TestSchemaCacheRoundTrip(t *testing.T) {
	coordination := func(t *testing.T) map[string]*spec.Schema {
		return realModels(t, "openapi-v3-coordination.k8s.io-v1.json")
	}
	widget := []kindEntry{{Group: "example.com", Version: "v1", Kind: "Widget", Type: "io.example.v1.Widget"}}
	lease := []kindEntry{
		{Group: "coordination.k8s.io", Version: "v1", Kind: "Lease", Type: "io.k8s.api.coordination.v1.Lease"},
		{Group: "coordination.k8s.io", Version: "v1", Kind: "LeaseList", Type: "io.k8s.api.coordination.v1.LeaseList"},
	}
	tests := []struct {
		name      string
		models    func(*testing.T) map[string]*spec.Schema
		wantKinds []kindEntry
	}{
		{name: "every schema element, no defaults", models: withoutDefaults(smallModels), wantKinds: widget},
		{name: "coordination.k8s.io/v1 as the apiserver serves it, no defaults", models: withoutDefaults(coordination), wantKinds: lease},
		{name: "defaults of every JSON type", models: smallModels, wantKinds: widget},
		{name: "coordination.k8s.io/v1 as the apiserver serves it", models: coordination, wantKinds: lease},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			orig, err := convertModels(tt.models(t))
			if err != nil {
				t.Fatal(err)
			}
			if len(orig.Types.Types) == 0 {
				t.Fatal("convertModels returned no types")
			}
			back := roundTrip(t, orig)
			checkSameTypes(t, &orig.Types, &back.Types)
			if diff := cmp.Diff(orig.Kinds, back.Kinds); diff != "" {
				t.Errorf("kinds (-wrote +read):\n%s", diff)
			}
			for _, k := range tt.wantKinds {
				found := false
				for _, got := range back.Kinds {
					found = found || got == k
				}
				if !found {
					t.Errorf("kind %+v missing from %+v", k, back.Kinds)
				}
			}
		})
	}
}

// Besides being equal, a cached schema must hold the same defaults as
// JSON values (which is how structured-merge-diff uses
// them: as values of list keys) and everything else unchanged.
func TestSchemaCacheRoundTripDefaultsAsJSON(t *testing.T) {
	tests := []struct {
		name   string
		models func(*testing.T) map[string]*spec.Schema
	}{
		{name: "defaults of every JSON type", models: smallModels},
		{name: "coordination.k8s.io/v1", models: func(t *testing.T) map[string]*spec.Schema {
			return realModels(t, "openapi-v3-coordination.k8s.io-v1.json")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			orig, err := convertModels(tt.models(t))
			if err != nil {
				t.Fatal(err)
			}
			back := roundTrip(t, orig)
			defaults := 0
			for _, s := range []*smdschema.Schema{&orig.Types, &back.Types} {
				for i := range s.Types {
					defaults += jsonDefaults(t, &s.Types[i].Atom)
				}
			}
			if defaults == 0 {
				t.Fatal("the models have no defaults: the test proves nothing")
			}
			checkSameTypes(t, &orig.Types, &back.Types)
		})
	}
}

// jsonDefaults rewrites every default below an atom to the form
// encoding/json decodes it to, and counts them.
func jsonDefaults(t *testing.T, a *smdschema.Atom) int {
	n := 0
	if a.Map != nil {
		for i := range a.Fields {
			f := &a.Fields[i]
			if f.Default != nil {
				b, err := json.Marshal(stringKeys(f.Default))
				if err != nil {
					t.Fatalf("default of %s: %v", f.Name, err)
				}
				var v any
				if err := json.Unmarshal(b, &v); err != nil {
					t.Fatal(err)
				}
				f.Default = v
				n++
			}
			n += jsonDefaults(t, &f.Type.Inlined)
		}
		n += jsonDefaults(t, &a.Map.ElementType.Inlined)
	}
	if a.List != nil {
		n += jsonDefaults(t, &a.List.ElementType.Inlined)
	}
	return n
}

func stringKeys(v any) any {
	switch t := v.(type) {
	case map[any]any:
		m := make(map[string]any, len(t))
		for k, e := range t {
			m[fmt.Sprint(k)] = stringKeys(e)
		}
		return m
	case map[string]any:
		m := make(map[string]any, len(t))
		for k, e := range t {
			m[k] = stringKeys(e)
		}
		return m
	case []any:
		l := make([]any, len(t))
		for i, e := range t {
			l[i] = stringKeys(e)
		}
		return l
	}
	return v
}

func TestCacheName(t *testing.T) {
	tests := []struct {
		name string
		gv   schema.GroupVersion
		url  string
		want string
	}{
		{name: "core group, hash from the URL", gv: schema.GroupVersion{Version: "v1"}, url: "/openapi/v3/api/v1?hash=0123ABCD", want: "core_v1_0123ABCD.smd"},
		{name: "named group", gv: schema.GroupVersion{Group: "apps", Version: "v1"}, url: "/openapi/v3/apis/apps/v1?hash=FF", want: "apps_v1_FF.smd"},
		{name: "unsafe characters in the hash", gv: schema.GroupVersion{Group: "example.com", Version: "v1"}, url: "/openapi/v3/apis/example.com/v1?hash=a/../b", want: "example.com_v1_a_.._b.smd"},
		{name: "no hash: the URL's digest", gv: schema.GroupVersion{Group: "apps", Version: "v1"}, url: "/openapi/v3/apis/apps/v1", want: "apps_v1_cb4c24f48aaa234e.smd"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := cacheName(tt.gv, tt.url); got != tt.want {
				t.Errorf("cacheName = %s, want %s", got, tt.want)
			}
		})
	}
}

// describeDiff names the struct fields of two versions of a type that
// differ, with their defaults, which a YAML round trip is most likely to
// change.
func describeDiff(a, b smdschema.TypeDef) string {
	if a.Map == nil || b.Map == nil || len(a.Fields) != len(b.Fields) {
		return fmt.Sprintf("\nwrote %#v\nread  %#v", a.Atom, b.Atom)
	}
	var out []string
	for i := range a.Fields {
		fa, fb := a.Fields[i], b.Fields[i]
		if !fa.Equals(&fb) {
			if !fa.Type.Equals(&fb.Type) {
				wa, _ := yaml.Marshal(fa.Type)
				wb, _ := yaml.Marshal(fb.Type)
				out = append(out, fmt.Sprintf("field %s: type\n%s became\n%s", fa.Name, wa, wb))
				if fa.Type.Inlined.List != nil && fb.Type.Inlined.List != nil {
					out = append(out, fmt.Sprintf("list %#v / %#v", *fa.Type.Inlined.List, *fb.Type.Inlined.List))
				}
				continue
			}
			out = append(out, fmt.Sprintf("field %s: default %#v (%T) became %#v (%T)", fa.Name, fa.Default, fa.Default, fb.Default, fb.Default))
		}
	}
	if len(out) == 0 {
		wa, _ := yaml.Marshal(a.Map)
		wb, _ := yaml.Marshal(b.Map)
		return fmt.Sprintf("map attributes:\nwrote %s\nread  %s", wa, wb)
	}
	return "\n" + strings.Join(out, "\n")
}
