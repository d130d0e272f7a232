package cmd_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/kubectl-ssa/kubectl-ssa/internal/benchdata"
)

// A field that many appliers share names the first five on its line and
// counts the others, in every view that lines up owners; -o json names
// them all.
func TestSharedFieldCountsOwnersPastFive(t *testing.T) {
	raw, err := yaml.Marshal(benchdata.ManyManagers(7).Object)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "many.yaml")
	if err := os.WriteFile(file, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("NO_COLOR", "1")
	tests := []struct {
		view, line, want string
	}{
		{"table", ".metadata.labels[", "manager-00000,manager-00001,manager-00002,manager-00003,manager-00004,+2 more"},
		{"wide", ".metadata.labels[", "Apply,Apply,Apply,Apply,Apply,+2 more"},
		{"blame", "app.kubernetes.io/name: many", "manager-00000 (Apply), manager-00001 (Apply), manager-00002 (Apply), manager-00003 (Apply), manager-00004 (Apply), +2 more"},
	}
	for _, tt := range tests {
		t.Run(tt.view, func(t *testing.T) {
			r := run(t, "who-owns", "--local", "-f", file, "-o", tt.view, "--time", "none")
			if r.err != nil {
				t.Fatalf("%v\n%s", r.err, r.errOut)
			}
			var line string
			for _, l := range strings.Split(r.out, "\n") {
				if strings.Contains(l, tt.line) {
					line = l
				}
			}
			if !strings.Contains(line, tt.want) || strings.Contains(line, "manager-00005") {
				t.Errorf("the line of %s:\n%s\nwant it to hold %q and no sixth manager", tt.line, line, tt.want)
			}
		})
	}
	r := run(t, "who-owns", "--local", "-f", file, "-o", "json")
	if n := strings.Count(r.out, `"manager": "manager-00006"`); n == 0 {
		t.Errorf("-o json leaves out manager-00006:\n%.3000s", r.out)
	}
}
