package ownership_test

import (
	"strings"
	"testing"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
)

func TestValidateManager(t *testing.T) {
	tests := []struct {
		name    string
		manager string
		wantErr string
	}{
		{name: "kubectl", manager: "kubectl"},
		{name: "spaces, slashes and unicode are printable", manager: "argo cd/äpp-controller"},
		{name: "128 bytes", manager: strings.Repeat("m", 128)},
		{name: "empty", manager: "", wantErr: "the manager name is empty"},
		{name: "129 bytes", manager: strings.Repeat("m", 129), wantErr: "it is 129 bytes long, more than the 128"},
		{name: "128 bytes of which multi-byte runes push it over", manager: strings.Repeat("é", 65), wantErr: "it is 130 bytes long"},
		{name: "newline", manager: "ci\ndeploy", wantErr: `invalid character U+000A`},
		{name: "escape", manager: "ci\x1b[31m", wantErr: `invalid character U+001B`},
		{name: "tab", manager: "ci\tdeploy", wantErr: `invalid character U+0009`},
		{name: "C1 control", manager: "ci\u009bdeploy", wantErr: `invalid character U+009B`},
		{name: "non-breaking space is not printable for the apiserver", manager: "ci\u00a0deploy", wantErr: `invalid character U+00A0`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ownership.ValidateManager(tt.manager)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("ValidateManager(%q) = %v, want nil", tt.manager, err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("ValidateManager(%q) = %v, want an error containing %q", tt.manager, err, tt.wantErr)
			}
		})
	}
}
