package krew

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// repoRoot is the plugin module's directory.
var repoRoot = filepath.Clean("../..")

// tools are the pinned release tools (goreleaser, krew, actionlint), built
// into the cache directory by the Makefile once and then reused.
type tools struct {
	goreleaser, krew, actionlint string
}

var (
	toolsOnce sync.Once
	toolsErr  string
	toolPaths tools
)

// releaseTools builds the tools (a no-op when they are in the cache: the
// first build of goreleaser takes minutes) with `make release-tools`,
// which prints their paths.
func releaseTools(t *testing.T) tools {
	t.Helper()
	toolsOnce.Do(func() {
		out, err := command(repoRoot, "make", "-s", "release-tools").CombinedOutput()
		if err != nil {
			toolsErr = "make release-tools: " + err.Error() + "\n" + string(out)
			return
		}
		paths := map[string]*string{"GORELEASER": &toolPaths.goreleaser, "KREW": &toolPaths.krew, "ACTIONLINT": &toolPaths.actionlint}
		sc := bufio.NewScanner(bytes.NewReader(out))
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), "="); ok && paths[k] != nil {
				*paths[k] = v
			}
		}
		for k, p := range paths {
			if *p == "" {
				toolsErr += "make release-tools printed no " + k + "=PATH\n" + string(out)
			}
		}
	})
	if toolsErr != "" {
		t.Fatal(toolsErr)
	}
	return toolPaths
}

func command(dir, name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	return cmd
}

// mustRun runs cmd and returns its stdout; it fails the test with both
// outputs when cmd fails.
func mustRun(t *testing.T, cmd *exec.Cmd) string {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	start := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(cmd.Args, " "), err, out.String(), errOut.String())
	}
	t.Logf("%s: %s", filepath.Base(cmd.Args[0])+" "+strings.Join(cmd.Args[1:], " "), time.Since(start).Round(time.Second/10))
	return out.String()
}

// goCmd is the go command of this test run.
func goCmd(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed: %v", err)
	}
	return p
}

func readFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
