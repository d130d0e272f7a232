// Package krew checks what a release ships: the krew plugin manifest at the
// repository root (krew-manifest.yaml, the output of .krew.yaml filled by
// hack/krew-manifest) with krew's own validator; a snapshot build of the
// release archives for this machine, installed by krew itself from the
// generated manifest; and the GitHub workflows, with actionlint.
//
// krew's validator is a tool of this module (go.mod: tool
// sigs.k8s.io/krew/cmd/validate-krew-manifest, sigs.k8s.io/krew v0.5.0);
// goreleaser, krew and actionlint are built once into the cache directory
// by `make release-tools`. `go run ...@version` can't be used: it asks the
// module proxy for the module's version list, which the proxy may refuse.
package krew

import (
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

var (
	manifestFile = filepath.Join(repoRoot, "krew-manifest.yaml")
	templateFile = filepath.Join(repoRoot, ".krew.yaml")
)

// validate runs krew's validator on a manifest. The validator wants the
// file named after the plugin (ssa.yaml), so it gets a copy.
func validate(t *testing.T, manifest []byte) (string, error) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "ssa.yaml")
	if err := os.WriteFile(file, manifest, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(goCmd(t), "tool", "validate-krew-manifest", "-manifest", file, "-skip-install").CombinedOutput()
	return string(out), err
}

func TestManifestPassesKrewValidation(t *testing.T) {
	if out, err := validate(t, readFile(t, manifestFile)); err != nil {
		t.Fatalf("validate-krew-manifest rejects %s: %v\n%s", manifestFile, err, out)
	}
}

// The validator really runs and rejects what krew rejects, so the test
// above can fail.
func TestValidatorRejectsBrokenManifests(t *testing.T) {
	manifest := string(readFile(t, manifestFile))
	tests := []struct {
		name, re, to, wantIn string
	}{
		{name: "plugin name", re: `name: ssa\n`, to: "name: sssa\n", wantIn: `plugin should be named "ssa"`},
		{name: "short sha256", re: `(sha256: [0-9a-f]{63})[0-9a-f]`, to: "$1", wantIn: "`sha256` value"},
		{name: "version", re: `(?m)^  version: .*$`, to: "  version: latest", wantIn: "failed to parse plugin version"},
		{name: "overlapping platforms", re: `os: darwin\n        arch: amd64`, to: "os: linux\n        arch: amd64", wantIn: "overlapping"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			re := regexp.MustCompile(tt.re)
			loc := re.FindStringIndex(manifest)
			if loc == nil {
				t.Fatalf("the manifest has no %s to break", tt.re)
			}
			broken := manifest[:loc[0]] + re.ReplaceAllString(manifest[loc[0]:loc[1]], tt.to) + manifest[loc[1]:]
			out, err := validate(t, []byte(broken))
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

type manifest struct {
	Spec struct {
		Version   string     `json:"version"`
		Caveats   string     `json:"caveats"`
		Platforms []platform `json:"platforms"`
	} `json:"spec"`
}

func parseManifest(t *testing.T, b []byte) manifest {
	t.Helper()
	var m manifest
	if err := yaml.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// What krew does not check but a release needs: every os/arch we build,
// each archive at its release URI, with the right binary and the shim.
func TestManifestPlatforms(t *testing.T) {
	m := parseManifest(t, readFile(t, manifestFile))
	if !strings.Contains(m.Spec.Caveats, "kubectl_complete-ssa") {
		t.Error("the caveats do not say how to install the kubectl_complete-ssa completion shim")
	}
	byTarget := map[string]platform{}
	for _, p := range m.Spec.Platforms {
		byTarget[p.Selector.MatchLabels["os"]+"/"+p.Selector.MatchLabels["arch"]] = p
	}
	sums := map[string]bool{}
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
				if !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(p.Sha256) || strings.Trim(p.Sha256, "0") == "" || sums[p.Sha256] {
					t.Errorf("sha256 %q is not the sum of a distinct archive", p.Sha256)
				}
				sums[p.Sha256] = true
				bin, shim, eval := "kubectl-ssa", "kubectl_complete-ssa", "ssa-admission-eval"
				if goos == "windows" {
					bin, shim, eval = bin+".exe", shim+".cmd", eval+".exe"
				}
				if p.Bin != bin {
					t.Errorf("bin %s, want %s", p.Bin, bin)
				}
				files := map[string]bool{}
				for _, f := range p.Files {
					files[f.From] = f.To == "."
				}
				for _, f := range []string{bin, eval, shim, "LICENSE"} {
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

// krew-manifest.yaml is .krew.yaml filled by hack/krew-manifest, not a
// hand edit: filling the template again with the manifest's own tag and
// sums gives the same bytes.
func TestManifestIsTheTemplatesOutput(t *testing.T) {
	want := readFile(t, manifestFile)
	m := parseManifest(t, want)
	var list strings.Builder
	for _, p := range m.Spec.Platforms {
		list.WriteString(p.Sha256 + "  " + path.Base(p.URI) + "\n")
	}
	checksums := filepath.Join(t.TempDir(), "checksums.txt")
	if err := os.WriteFile(checksums, []byte(list.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"run", "./hack/krew-manifest", "-template", ".krew.yaml", "-checksums", checksums, "-trust-checksums", "-tag", m.Spec.Version}
	if c := regexp.MustCompile(`^# .* built from commit ([0-9a-f]+),\n`).FindSubmatch(want); c != nil {
		args = append(args, "-commit", string(c[1]))
	}
	got := mustRun(t, command(repoRoot, goCmd(t), args...))
	if got != string(want) {
		t.Errorf("krew-manifest.yaml is not what %s gives for %s (make krew-manifest after a release build rewrites it); the template gives:\n%s", templateFile, m.Spec.Version, got)
	}
}
