// Package jsonschema writes the JSON Schema (draft 2020-12) of kubectl-ssa's
// reports from their Go types, as encoding/json marshals them: json tags,
// omitempty (not required), embedded structs, pointers, slices and maps
// that marshal as null when nil, and the types with their own marshalling
// (paths and commands as strings, times as RFC 3339 strings). Every object
// is closed (additionalProperties false), so a field renamed or added
// without its schema fails the schema test.
package jsonschema

import (
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Schema is a JSON Schema document, as a JSON object.
type Schema = map[string]any

var (
	jsonMarshaler = reflect.TypeOf((*json.Marshaler)(nil)).Elem()
	textMarshaler = reflect.TypeOf((*encoding.TextMarshaler)(nil)).Elem()
	timeType      = reflect.TypeOf(metav1.Time{})
	fieldsV1Type  = reflect.TypeOf(metav1.FieldsV1{})
)

// Generate is the schema of values of t, with the named struct types it
// uses under $defs. id is the schema's $id; enums gives the allowed values
// of named string types (by their Go name, package.Type); names renames
// types under $defs (by their Go name: the published names of types that
// moved to another package).
func Generate(t reflect.Type, id, title string, enums map[string][]string, names map[string]string) Schema {
	g := &generator{defs: map[string]Schema{}, enums: enums, names: names}
	root := g.schema(t)
	out := Schema{
		"$schema": "https://json-schema.org/draft/2020-12/schema",
		"$id":     id,
		"title":   title,
	}
	for k, v := range root {
		out[k] = v
	}
	if len(g.defs) > 0 {
		out["$defs"] = g.defs
	}
	return out
}

type generator struct {
	defs  map[string]Schema
	enums map[string][]string
	names map[string]string
}

func nullable(s Schema) Schema {
	return Schema{"anyOf": []any{s, Schema{"type": "null"}}}
}

func typeName(t reflect.Type) string {
	pkg := t.PkgPath()
	if i := strings.LastIndex(pkg, "/"); i >= 0 {
		pkg = pkg[i+1:]
	}
	return pkg + "." + t.Name()
}

func (g *generator) schema(t reflect.Type) Schema {
	switch t {
	case timeType:
		return Schema{"type": "string", "format": "date-time"}
	case fieldsV1Type:
		return Schema{"type": "object"}
	}
	if t.Kind() == reflect.Pointer {
		if t.Elem().Kind() == reflect.Interface {
			return Schema{} // any value already takes null
		}
		return nullable(g.schema(t.Elem()))
	}
	if t.Implements(jsonMarshaler) || reflect.PointerTo(t).Implements(jsonMarshaler) ||
		t.Implements(textMarshaler) || reflect.PointerTo(t).Implements(textMarshaler) {
		// kubectl-ssa's own marshallers (paths, commands) write strings;
		// a type that writes something else is listed above.
		return Schema{"type": "string"}
	}
	switch t.Kind() {
	case reflect.String:
		if vals, ok := g.enums[typeName(t)]; ok && t.Name() != "" {
			return Schema{"type": "string", "enum": vals}
		}
		return Schema{"type": "string"}
	case reflect.Bool:
		return Schema{"type": "boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return Schema{"type": "integer"}
	case reflect.Float32, reflect.Float64:
		return Schema{"type": "number"}
	case reflect.Interface:
		return Schema{}
	case reflect.Slice, reflect.Array:
		return nullable(Schema{"type": "array", "items": g.schema(t.Elem())})
	case reflect.Map:
		return nullable(Schema{"type": "object", "additionalProperties": g.schema(t.Elem())})
	case reflect.Struct:
		name := typeName(t)
		if n, ok := g.names[name]; ok {
			name = n
		}
		if t.Name() == "" {
			return g.object(t)
		}
		if _, ok := g.defs[name]; !ok {
			g.defs[name] = Schema{} // a placeholder against recursion
			g.defs[name] = g.object(t)
		}
		return Schema{"$ref": "#/$defs/" + name}
	}
	panic(fmt.Sprintf("jsonschema: no schema for %s", t))
}

// object is a struct's schema: its fields as encoding/json writes them.
func (g *generator) object(t reflect.Type) Schema {
	props := Schema{}
	var required []string
	g.fields(t, props, &required)
	sort.Strings(required)
	s := Schema{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

func (g *generator) fields(t reflect.Type, props Schema, required *[]string) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			et := f.Type
			if et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if et.Kind() == reflect.Struct {
				g.fields(et, props, required)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		props[name] = g.schema(f.Type)
		if !strings.Contains(","+opts+",", ",omitempty,") && !strings.Contains(","+opts+",", ",omitzero,") {
			*required = append(*required, name)
		}
	}
}
