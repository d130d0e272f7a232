package krew

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// The workflows pass actionlint (pinned, built by make release-tools).
func TestWorkflowsPassActionlint(t *testing.T) {
	actionlint := releaseTools(t).actionlint
	mustRun(t, command(repoRoot, actionlint, "-color=false"))
}

// actionlint really checks: it rejects a broken workflow, so the test
// above can fail.
func TestActionlintRejectsBrokenWorkflows(t *testing.T) {
	actionlint := releaseTools(t).actionlint
	file := filepath.Join(t.TempDir(), "broken.yml")
	broken := "on: push\njobs:\n  x:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: actions/checkout@v6\n        with:\n          fetch-dept: 0\n      - run: echo ${{ github.nope }}\n"
	if err := os.WriteFile(file, []byte(broken), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := command(repoRoot, actionlint, "-color=false", file).CombinedOutput()
	if err == nil {
		t.Fatalf("actionlint accepted a broken workflow:\n%s", out)
	}
	for _, want := range []string{`input "fetch-dept" is not defined`, `property "nope" is not defined`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("actionlint said %q, want %q", out, want)
		}
	}
}

// Dependabot watches every go.mod of the repository and the actions.
func TestDependabotCoversEveryModule(t *testing.T) {
	var cfg struct {
		Updates []struct {
			Ecosystem   string   `json:"package-ecosystem"`
			Directory   string   `json:"directory"`
			Directories []string `json:"directories"`
		} `json:"updates"`
	}
	if err := yaml.Unmarshal(readFile(t, filepath.Join(repoRoot, ".github", "dependabot.yml")), &cfg); err != nil {
		t.Fatal(err)
	}
	watched := map[string][]string{}
	for _, u := range cfg.Updates {
		dirs := u.Directories
		if u.Directory != "" {
			dirs = append(dirs, u.Directory)
		}
		watched[u.Ecosystem] = append(watched[u.Ecosystem], dirs...)
	}
	var modules []string
	err := filepath.WalkDir(repoRoot, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "dist" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.Name() == "go.mod" {
			rel, _ := filepath.Rel(repoRoot, filepath.Dir(p))
			modules = append(modules, "/"+strings.TrimPrefix(filepath.ToSlash(rel), "."))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(modules) < 2 {
		t.Fatalf("found the modules %v, want the plugin's and the test module", modules)
	}
	for _, m := range modules {
		if !slices.Contains(watched["gomod"], m) {
			t.Errorf("dependabot does not watch the Go module in %s (gomod watches %v)", m, watched["gomod"])
		}
	}
	if !slices.Contains(watched["github-actions"], "/") {
		t.Error("dependabot does not watch the GitHub actions")
	}
}
