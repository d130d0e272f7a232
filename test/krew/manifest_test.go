// Package krew checks the krew plugin manifest at the repository root,
// krew-manifest.yaml, with krew's own validator: validate-krew-manifest,
// pinned as a tool of this module (go.mod: tool
// sigs.k8s.io/krew/cmd/validate-krew-manifest, sigs.k8s.io/krew v0.5.0).
// `go run ...@version` can't be used: it asks the module proxy for the
// module's version list, which the proxy may refuse.
package krew

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

const manifestFile = "../../krew-manifest.yaml"

// validate runs krew's validator on a manifest. The validator wants the
// file named after the plugin (ssa.yaml), so it gets a copy.
func validate(t *testing.T, manifest []byte) (string, error) {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to run the validator: %v", err)
	}
	file := filepath.Join(t.TempDir(), "ssa.yaml")
	if err := os.WriteFile(file, manifest, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(goBin, "tool", "validate-krew-manifest", "-manifest", file, "-skip-install").CombinedOutput()
	return string(out), err
}

func TestManifestPassesKrewValidation(t *testing.T) {
	manifest, err := os.ReadFile(manifestFile)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := validate(t, manifest); err != nil {
		t.Fatalf("validate-krew-manifest rejects %s: %v\n%s", manifestFile, err, out)
	}
}

// The validator really runs and rejects what krew rejects, so the test
// above can fail.
func TestValidatorRejectsBrokenManifests(t *testing.T) {
	manifest, err := os.ReadFile(manifestFile)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, from, to, wantIn string
	}{
		{name: "plugin name", from: "name: ssa", to: "name: sssa", wantIn: `plugin should be named "ssa"`},
		{name: "short sha256", from: `sha256: "` + strings.Repeat("0", 64), to: `sha256: "` + strings.Repeat("0", 63), wantIn: "`sha256` value"},
		{name: "version", from: "version: v0.1.0", to: "version: latest", wantIn: "failed to parse plugin version"},
		{name: "overlapping platforms", from: "os: darwin\n        arch: amd64", to: "os: linux\n        arch: amd64", wantIn: "overlapping"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !strings.Contains(string(manifest), tt.from) {
				t.Fatalf("the manifest has no %q to break", tt.from)
			}
			out, err := validate(t, []byte(strings.Replace(string(manifest), tt.from, tt.to, 1)))
			if err == nil {
				t.Fatalf("validate-krew-manifest accepted a manifest with %q:\n%s", tt.to, out)
			}
			if !strings.Contains(out, tt.wantIn) {
				t.Errorf("validate-krew-manifest said %q, want %q", out, tt.wantIn)
			}
		})
	}
}

type platform struct {
	Selector struct {
		MatchLabels map[string]string `json:"matchLabels"`
	} `json:"selector"`
	URI    string `json:"uri"`
	Sha256 string `json:"sha256"`
	Bin    string `json:"bin"`
	Files  []struct {
		From string `json:"from"`
		To   string `json:"to"`
	} `json:"files"`
}

// What krew does not check but a release needs: every os/arch we build,
// each archive at its release URI, with the right binary and the shim.
func TestManifestPlatforms(t *testing.T) {
	b, err := os.ReadFile(manifestFile)
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Spec struct {
			Version   string     `json:"version"`
			Caveats   string     `json:"caveats"`
			Platforms []platform `json:"platforms"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(m.Spec.Caveats, "kubectl_complete-ssa") {
		t.Error("the caveats do not say how to install the kubectl_complete-ssa completion shim")
	}
	byTarget := map[string]platform{}
	for _, p := range m.Spec.Platforms {
		byTarget[p.Selector.MatchLabels["os"]+"/"+p.Selector.MatchLabels["arch"]] = p
	}
	for _, goos := range []string{"linux", "darwin", "windows"} {
		for _, arch := range []string{"amd64", "arm64"} {
			target := goos + "/" + arch
			t.Run(target, func(t *testing.T) {
				p, ok := byTarget[target]
				if !ok {
					t.Fatal("no platform")
				}
				wantURI := "https://github.com/kubectl-ssa/kubectl-ssa/releases/download/" + m.Spec.Version + "/kubectl-ssa_" + goos + "_" + arch + ".tar.gz"
				if p.URI != wantURI {
					t.Errorf("uri %s, want %s", p.URI, wantURI)
				}
				bin := "kubectl-ssa"
				if goos == "windows" {
					bin += ".exe"
				}
				if p.Bin != bin {
					t.Errorf("bin %s, want %s", p.Bin, bin)
				}
				files := map[string]bool{}
				for _, f := range p.Files {
					files[f.From] = f.To == "."
				}
				want := []string{bin, "LICENSE"}
				if goos != "windows" {
					want = append(want, "kubectl_complete-ssa")
				}
				for _, f := range want {
					if !files[f] {
						t.Errorf("files do not copy %s to .", f)
					}
				}
			})
		}
	}
	if len(byTarget) != 6 || len(m.Spec.Platforms) != 6 {
		t.Errorf("%d platforms, want the 6 above once each", len(m.Spec.Platforms))
	}
}
