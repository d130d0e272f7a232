package krew

import (
	"archive/tar"
	"compress/gzip"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

// cleanClone clones the repository's HEAD: the release test builds what is
// committed, as a release does, from a checkout that holds nothing else
// (and has a remote, which goreleaser needs to read the commit).
func cleanClone(t *testing.T, src string) string {
	t.Helper()
	mustRun(t, command(repoRoot, "git", "clone", "--quiet", ".", src))
	return src
}

// snapshot builds the release for this machine only with the clone's
// .goreleaser.yaml, changed in two places: the dist directory and the build
// targets. It returns the version goreleaser stamped (no "v").
func snapshot(t *testing.T, goreleaser, src, dist string) string {
	t.Helper()
	var cfg map[string]any
	if err := yaml.Unmarshal(readFile(t, filepath.Join(src, ".goreleaser.yaml")), &cfg); err != nil {
		t.Fatal(err)
	}
	cfg["dist"] = dist
	builds, _ := cfg["builds"].([]any)
	if len(builds) == 0 {
		t.Fatal(".goreleaser.yaml has no builds")
	}
	for _, b := range builds {
		b := b.(map[string]any)
		b["goos"] = []string{runtime.GOOS}
		b["goarch"] = []string{runtime.GOARCH}
	}
	b, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(filepath.Dir(dist), filepath.Base(dist)+".goreleaser.yaml")
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
	// The flags of make release-snapshot, which skips the SBOMs without syft.
	skip := "publish,announce,sign"
	if !haveSyft() {
		skip += ",sbom"
	}
	// One build at a time, as make release: an archive holds its binaries
	// in the order their builds finish.
	mustRun(t, command(src, goreleaser, "release", "--snapshot", "--clean", "--parallelism", "1", "--skip="+skip, "--config", file))
	var meta struct {
		Version string `json:"version"`
	}
	if err := json.Unmarshal(readFile(t, filepath.Join(dist, "metadata.json")), &meta); err != nil || meta.Version == "" {
		t.Fatalf("%s/metadata.json: no version: %v", dist, err)
	}
	return meta.Version
}

// haveSyft says whether goreleaser's SBOM tool is on the PATH: it can't be
// built from the Go module proxy, the CI workflow installs it.
func haveSyft() bool {
	_, err := exec.LookPath("syft")
	return err == nil
}

// checksums reads goreleaser's checksums.txt: archive name -> sha256.
func checksums(t *testing.T, dist string) map[string]string {
	t.Helper()
	sums := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(readFile(t, filepath.Join(dist, "checksums.txt")))), "\n") {
		sum, name, _ := strings.Cut(line, "  ")
		sums[name] = sum
	}
	return sums
}

type entry struct {
	Mode  int64
	Owner string
	MTime time.Time
}

// archiveEntries lists a tar.gz: name -> mode, owner and mtime.
func archiveEntries(t *testing.T, file string) map[string]entry {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }() // read only
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	entries := map[string]entry{}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return entries
		}
		if err != nil {
			t.Fatal(err)
		}
		entries[h.Name] = entry{Mode: h.Mode, Owner: h.Uname + ":" + h.Gname, MTime: h.ModTime.UTC()}
	}
}

// The release build for this machine from a clean clone of HEAD (commit
// your changes first), its krew manifest filled from the archive, validated
// by krew, installed by krew from the local archive (which checks the
// sha256) into a private KREW_ROOT, and the installed plugin run. Offline.
func TestSnapshotInstallsWithKrew(t *testing.T) {
	tl := releaseTools(t)
	dir := t.TempDir()
	src := cleanClone(t, filepath.Join(dir, "src"))
	dist := filepath.Join(dir, "dist")
	version := snapshot(t, tl.goreleaser, src, dist)

	exe := ""
	if runtime.GOOS == "windows" {
		exe = ".exe"
	}
	shim := "kubectl_complete-ssa"
	if runtime.GOOS == "windows" {
		shim += ".cmd"
	}
	name := "kubectl-ssa_" + runtime.GOOS + "_" + runtime.GOARCH + ".tar.gz"
	archive := filepath.Join(dist, name)
	commit := strings.TrimSpace(mustRun(t, command(src, "git", "rev-parse", "--short", "HEAD")))
	unix, err := strconv.ParseInt(strings.TrimSpace(mustRun(t, command(src, "git", "log", "-1", "--format=%ct"))), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	commitDate := time.Unix(unix, 0).UTC()

	t.Run("archive", func(t *testing.T) {
		want := map[string]entry{
			"kubectl-ssa" + exe:        {Mode: 0o755, Owner: "root:root", MTime: commitDate},
			"ssa-admission-eval" + exe: {Mode: 0o755, Owner: "root:root", MTime: commitDate},
			shim:                       {Mode: 0o755, Owner: "root:root", MTime: commitDate},
			"LICENSE":                  {Mode: 0o644, Owner: "root:root", MTime: commitDate},
			"README.md":                {Mode: 0o644, Owner: "root:root", MTime: commitDate},
		}
		if diff := cmp.Diff(want, archiveEntries(t, archive)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
		if _, ok := checksums(t, dist)[name]; !ok {
			t.Errorf("checksums.txt does not list %s", name)
		}
		if haveSyft() {
			var sbom struct {
				SPDXVersion string `json:"spdxVersion"`
				Packages    []struct {
					Name string `json:"name"`
				} `json:"packages"`
			}
			if err := json.Unmarshal(readFile(t, archive+".sbom.json"), &sbom); err != nil || sbom.SPDXVersion == "" || len(sbom.Packages) == 0 {
				t.Errorf("%s.sbom.json is not an SPDX document with packages: %v", name, err)
			}
		}
	})

	// A second build of the same commit, in another clone, gives the same
	// bytes.
	t.Run("reproducible", func(t *testing.T) {
		dist2 := filepath.Join(dir, "dist2")
		snapshot(t, tl.goreleaser, cleanClone(t, filepath.Join(dir, "another", "clone")), dist2)
		if a, b := checksums(t, dist)[name], checksums(t, dist2)[name]; a == "" || a != b {
			t.Errorf("two builds of one commit: %s has sha256 %s, then %s", name, a, b)
		}
	})

	manifest := filepath.Join(dir, "ssa.yaml")
	mustRun(t, command(src, goCmd(t), "run", "./hack/krew-manifest", "-dist", dist, "-partial", "-o", manifest))
	if out, err := validate(t, readFile(t, manifest)); err != nil {
		t.Fatalf("validate-krew-manifest rejects the generated manifest: %v\n%s\n%s", err, out, readFile(t, manifest))
	}
	m := parseManifest(t, readFile(t, manifest))
	if m.Spec.Version != "v"+version || len(m.Spec.Platforms) != 1 || m.Spec.Platforms[0].Sha256 != checksums(t, dist)[name] {
		t.Fatalf("the generated manifest is not the one of %s (v%s):\n%s", name, version, readFile(t, manifest))
	}

	// krew in a private KREW_ROOT and HOME; no upgrade check (no network).
	krewRoot := filepath.Join(dir, "krew")
	home := filepath.Join(dir, "home")
	env := append(os.Environ(),
		"KREW_ROOT="+krewRoot,
		"HOME="+home,
		"USERPROFILE="+home,
		"KUBECONFIG="+filepath.Join(home, "no-kubeconfig"),
		"KREW_NO_UPGRADE_CHECK=1",
		"PATH="+filepath.Join(krewRoot, "bin")+string(os.PathListSeparator)+os.Getenv("PATH"),
	)
	install := command(dir, tl.krew, "install", "--manifest="+manifest, "--archive="+archive)
	install.Env = env
	mustRun(t, install)

	plugin := filepath.Join(krewRoot, "bin", "kubectl-ssa"+exe)
	run := func(t *testing.T, args ...string) (string, string) {
		t.Helper()
		cmd := command(dir, plugin, args...)
		cmd.Env = env
		var errOut strings.Builder
		cmd.Stderr = &errOut
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s %v: %v\n%s", plugin, args, err, errOut.String())
		}
		return string(out), errOut.String()
	}

	t.Run("version", func(t *testing.T) {
		// Without a server: the client's version, and exit 2 saying the
		// server's is unknown.
		cmd := command(dir, plugin, "version")
		cmd.Env = env
		var stderr strings.Builder
		cmd.Stderr = &stderr
		stdout, err := cmd.Output()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 2 {
			t.Errorf("version without a server: %v, want exit 2", err)
		}
		out, errOut := string(stdout), stderr.String()
		wantOut := "kubectl-ssa v" + version + " (commit " + commit + ", built " + commitDate.Format(time.RFC3339) + ", " + runtime.Version() + ", " + runtime.GOOS + "/" + runtime.GOARCH + ")\n"
		if out != wantOut {
			t.Errorf("installed kubectl-ssa version:\n got %q\nwant %q", out, wantOut)
		}
		if !strings.Contains(errOut, "error: server version unknown: no kubeconfig") {
			t.Errorf("stderr %q does not say there is no server", errOut)
		}
		out, errOut = run(t, "version", "--client", "-o", "json")
		var v struct{ Version, GitCommit, BuildDate string }
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			t.Fatal(err)
		}
		if v.Version != "v"+version || v.GitCommit != commit || v.BuildDate != commitDate.Format(time.RFC3339) || errOut != "" {
			t.Errorf("version --client -o json: %+v, stderr %q", v, errOut)
		}
	})

	// The companion that evaluates admission policies is beside the
	// executable the krew link resolves to, where kubectl-ssa looks for it.
	t.Run("companion", func(t *testing.T) {
		real, err := filepath.EvalSymlinks(plugin)
		if err != nil {
			t.Fatal(err)
		}
		eval := filepath.Join(filepath.Dir(real), "ssa-admission-eval"+exe)
		cmd := command(dir, eval)
		cmd.Env = env
		cmd.Stdin = strings.NewReader("{}")
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 2 || !strings.Contains(string(out), "PolicyEvaluationRequest") {
			t.Errorf("%s: %v\n%s", eval, err, out)
		}
	})

	// krew copied the files the manifest names into its store; the shim
	// there completes through the kubectl-ssa krew put on the PATH.
	t.Run("completion shim", func(t *testing.T) {
		store := filepath.Join(krewRoot, "store", "ssa", "v"+version)
		for _, f := range []string{"kubectl-ssa" + exe, shim, "LICENSE"} {
			if _, err := os.Stat(filepath.Join(store, f)); err != nil {
				t.Errorf("krew did not install %s: %v", f, err)
			}
		}
		cmd := command(dir, filepath.Join(store, shim), "")
		cmd.Env = env
		out := mustRun(t, cmd)
		for _, want := range []string{"who-owns", "explain-conflict", "handover", "migrate", "version", "\n:"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s \"\" printed %q, want it to offer %q", shim, out, want)
			}
		}
	})
}
