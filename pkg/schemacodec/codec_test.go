package schemacodec

import (
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/structured-merge-diff/v6/schema"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
)

func ptr[T any](v T) *T { return &v }

// full sets every field of every schema type, and a default of every Go
// type JSON decoding gives.
func full() *schema.Schema {
	str := schema.String
	return &schema.Schema{Types: []schema.TypeDef{
		{Name: "scalar", Atom: schema.Atom{Scalar: ptr(schema.Numeric)}},
		{Name: "list", Atom: schema.Atom{List: &schema.List{
			ElementType:         schema.TypeRef{NamedType: ptr("item")},
			ElementRelationship: schema.Associative,
			Keys:                []string{"name", "protocol"},
		}}},
		{Name: "item", Atom: schema.Atom{Map: &schema.Map{
			Fields: []schema.StructField{
				{Name: "name", Type: schema.TypeRef{Inlined: schema.Atom{Scalar: &str}}, Default: ""},
				{Name: "nothing", Type: schema.TypeRef{NamedType: ptr("scalar")}, Default: nil},
				{Name: "yes", Type: schema.TypeRef{NamedType: ptr("b")}, Default: true},
				{Name: "no", Type: schema.TypeRef{NamedType: ptr("b")}, Default: false},
				{Name: "port", Type: schema.TypeRef{NamedType: ptr("scalar")}, Default: float64(80.5)},
				{Name: "count", Type: schema.TypeRef{NamedType: ptr("scalar")}, Default: int64(-3)},
				{Name: "obj", Type: schema.TypeRef{
					Inlined:             schema.Atom{Map: &schema.Map{ElementType: schema.TypeRef{Inlined: schema.Atom{Scalar: ptr(schema.Untyped)}}, ElementRelationship: schema.Separable}},
					ElementRelationship: ptr(schema.Atomic),
					Nullable:            true,
				}, Default: map[string]any{"b": []any{"x", float64(1), nil, map[string]any{}}, "a": map[string]any{"c": true}}},
				{Name: "empty", Type: schema.TypeRef{NamedType: ptr("scalar")}, Default: []any{}},
				{Name: "unicode ✓", Type: schema.TypeRef{NamedType: ptr("scalar")}, Default: "ünï\x00"},
			},
			Unions: []schema.Union{
				{Discriminator: ptr("type"), DeduceInvalidDiscriminator: true, Fields: []schema.UnionField{{FieldName: "a", DiscriminatorValue: "A"}, {FieldName: "b", DiscriminatorValue: "B"}}},
				{Fields: []schema.UnionField{{FieldName: "c"}}},
			},
			ElementType:         schema.TypeRef{NamedType: ptr("scalar")},
			ElementRelationship: schema.Atomic,
		}}},
		{Name: "empty"},
	}}
}

func roundTrip(t *testing.T, name string, s *schema.Schema) {
	t.Helper()
	b, err := Encode(s)
	if err != nil {
		t.Fatalf("%s: Encode: %v", name, err)
	}
	got, err := Decode(b)
	if err != nil {
		t.Fatalf("%s: Decode: %v", name, err)
	}
	if !reflect.DeepEqual(got.Types, s.Types) {
		t.Fatalf("%s: the decoded schema differs from the encoded one", name)
	}
	again, err := Encode(got)
	if err != nil || string(again) != string(b) {
		t.Fatalf("%s: encoding the decoded schema gives other bytes (%v)", name, err)
	}
}

func TestRoundTrip(t *testing.T) {
	roundTrip(t, "every field", full())
	roundTrip(t, "empty", &schema.Schema{})
	roundTrip(t, "typed.DeducedParseableType", typed.DeducedParseableType.Schema)
}

func TestEncodeRefusesWhatItCantReadBack(t *testing.T) {
	s := full()
	s.Types[2].Map.Fields[0].Default = int32(1)
	if _, err := Encode(s); err == nil || !strings.Contains(err.Error(), "int32") {
		t.Fatalf("Encode of an int32 default: err = %v, want a refusal naming the type", err)
	}
}

func TestDecodeRefusesBadInput(t *testing.T) {
	good, err := Encode(full())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Decode([]byte("not a schema")); err == nil {
		t.Error("Decode of another format: no error")
	}
	if _, err := Decode(append(append([]byte{}, good...), 0)); err == nil {
		t.Error("Decode with a byte left over: no error")
	}
	// Every truncation fails, and none panics.
	for i := 0; i < len(good); i++ {
		if _, err := Decode(good[:i]); err == nil {
			t.Fatalf("Decode of the first %d of %d bytes: no error", i, len(good))
		}
	}
	// Every single corrupt byte either fails or decodes: never panics.
	for i := len(magic); i < len(good); i++ {
		b := append([]byte{}, good...)
		b[i] ^= 0xff
		_, _ = Decode(b)
	}
}

// TestEveryFieldIsWritten fails when structured-merge-diff's schema types
// gain or lose a field: the codec must then write it (and its magic
// change), or a cached schema would silently lack it.
func TestEveryFieldIsWritten(t *testing.T) {
	written := map[reflect.Type][]string{
		reflect.TypeOf(schema.TypeDef{}):     {"Name", "Atom"},
		reflect.TypeOf(schema.Atom{}):        {"Scalar", "List", "Map"},
		reflect.TypeOf(schema.List{}):        {"ElementType", "ElementRelationship", "Keys"},
		reflect.TypeOf(schema.Map{}):         {"Fields", "Unions", "ElementType", "ElementRelationship"},
		reflect.TypeOf(schema.StructField{}): {"Name", "Type", "Default"},
		reflect.TypeOf(schema.TypeRef{}):     {"NamedType", "Inlined", "ElementRelationship", "Nullable"},
		reflect.TypeOf(schema.Union{}):       {"Discriminator", "DeduceInvalidDiscriminator", "Fields"},
		reflect.TypeOf(schema.UnionField{}):  {"FieldName", "DiscriminatorValue"},
	}
	for typ, want := range written {
		var got []string
		for i := 0; i < typ.NumField(); i++ {
			if f := typ.Field(i); f.IsExported() {
				got = append(got, f.Name)
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("schema.%s has the fields %v; the codec writes %v", typ.Name(), got, want)
		}
	}
	// Schema itself: only Types is data.
	st := reflect.TypeOf(schema.Schema{})
	for i := 0; i < st.NumField(); i++ {
		if f := st.Field(i); f.IsExported() && f.Name != "Types" {
			t.Errorf("schema.Schema has a new field %s the codec does not write", f.Name)
		}
	}
}

func BenchmarkDecode(b *testing.B) {
	enc, err := Encode(typed.DeducedParseableType.Schema)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := Decode(enc); err != nil {
			b.Fatal(err)
		}
	}
}
