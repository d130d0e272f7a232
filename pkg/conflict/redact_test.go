package conflict

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

func TestRedactQuotedValues(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"list", `.stringData.password: expected string, got &value.valueUnstructured{Value:[]interface {}{"S3CR3T-inmsg"}}`, `.stringData.password: expected string, got a value (<redacted>)`},
		{"map", `.data: expected map, got &value.valueUnstructured{Value:map[string]interface {}{"k":"S3CR3T-a}b{"}} and more`, `.data: expected map, got a value (<redacted>) and more`},
		{"two", `x &value.valueUnstructured{Value:"S3CR3T-1"}, y &value.valueUnstructured{Value:"S3CR3T-2\"}"}`, `x a value (<redacted>), y a value (<redacted>)`},
		{"unclosed", `x &value.valueUnstructured{Value:"S3CR3T-3`, `x a value (<redacted>)`},
		{"none", `no value here {}`, `no value here {}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := redactQuotedValues(tc.in)
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
			if strings.Contains(got, "S3CR3T") {
				t.Errorf("the value is still there: %q", got)
			}
		})
	}
}

// A Secret's .data keys that the applied stringData sets are written by
// the apiserver from it: neither removed nor reset by the apply.
func TestFromStringData(t *testing.T) {
	secret := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret", "stringData": map[string]any{"password": "x"}}}
	empty := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret"}}
	cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "stringData": map[string]any{"password": "x"}}}
	for _, tc := range []struct {
		name    string
		applied *unstructured.Unstructured
		path    fieldpath.Path
		want    bool
	}{
		{"data", secret, fieldpath.MakePathOrDie("data"), true},
		{"data key set", secret, fieldpath.MakePathOrDie("data", "password"), true},
		{"data key not set", secret, fieldpath.MakePathOrDie("data", "other"), false},
		{"no stringData", empty, fieldpath.MakePathOrDie("data"), false},
		{"type", secret, fieldpath.MakePathOrDie("type"), false},
		{"not a Secret", cm, fieldpath.MakePathOrDie("data", "password"), false},
		{"nothing applied", nil, fieldpath.MakePathOrDie("data"), false},
	} {
		if got := fromStringData(tc.applied, tc.path); got != tc.want {
			t.Errorf("%s: got %v", tc.name, got)
		}
	}
}
