package jsonschema

import (
	"encoding/json"
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

type color string

type path struct{}

func (p path) MarshalText() ([]byte, error) { return nil, nil }

type inner struct {
	Name string `json:"name"`
}

type base struct {
	Kind string `json:"kind"`
}

type report struct {
	base    `json:",inline"`
	Color   color             `json:"color"`
	Count   int               `json:"count,omitempty"`
	Ratio   float64           `json:"ratio,omitzero"`
	When    metav1.Time       `json:"when"`
	Path    path              `json:"path"`
	Items   []inner           `json:"items"`
	Labels  map[string]string `json:"labels,omitempty"`
	Next    *inner            `json:"next,omitempty"`
	Any     any               `json:"any,omitempty"`
	Hidden  string            `json:"-"`
	private string            // unexported: not marshalled
}

func TestGenerate(t *testing.T) {
	_ = report{private: "x"}
	s := Generate(reflect.TypeOf(report{}), "https://example.com/r.json", "R", map[string][]string{"jsonschema.color": {"red", "blue"}}, nil)
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	want := `{"$defs":{"jsonschema.inner":{"additionalProperties":false,"properties":{"name":{"type":"string"}},"required":["name"],"type":"object"},` +
		`"jsonschema.report":{"additionalProperties":false,"type":"object","required":["color","items","kind","path","when"],"properties":{` +
		`"any":{},` +
		`"color":{"enum":["red","blue"],"type":"string"},` +
		`"count":{"type":"integer"},` +
		`"items":{"anyOf":[{"items":{"$ref":"#/$defs/jsonschema.inner"},"type":"array"},{"type":"null"}]},` +
		`"kind":{"type":"string"},` +
		`"labels":{"anyOf":[{"additionalProperties":{"type":"string"},"type":"object"},{"type":"null"}]},` +
		`"next":{"anyOf":[{"$ref":"#/$defs/jsonschema.inner"},{"type":"null"}]},` +
		`"path":{"type":"string"},` +
		`"ratio":{"type":"number"},` +
		`"when":{"format":"date-time","type":"string"}}}},` +
		`"$id":"https://example.com/r.json","$ref":"#/$defs/jsonschema.report","$schema":"https://json-schema.org/draft/2020-12/schema","title":"R"}`
	var w map[string]any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, w) {
		t.Errorf("schema:\n%s", b)
	}
}
