package conflict

import (
	"strings"
	"testing"
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
