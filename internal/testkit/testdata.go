package testkit

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
)

// ReadFixture reads name (a slash path such as "crd/widgets.yaml") from
// testdata/ at the repository root, which the tests of both modules and
// the demo share (testdata/README.md says what each file is). The root is
// found from the working directory up: the first directory holding both
// go.mod and testdata/README.md, so it works from a package's directory
// (go test), from test/ (the e2e tests, the demo) and with -trimpath.
func ReadFixture(name string) (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if fileExists(filepath.Join(dir, "go.mod")) && fileExists(filepath.Join(dir, "testdata", "README.md")) {
			b, err := os.ReadFile(filepath.Join(dir, "testdata", filepath.FromSlash(name)))
			return string(b), err
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no testdata/README.md next to a go.mod above the working directory: run from inside the repository")
		}
		dir = parent
	}
}

// Fixture is ReadFixture for a test: a fixture that does not read fails it.
func Fixture(t interface {
	Helper()
	Fatalf(format string, args ...any)
}, name string) string {
	t.Helper()
	s, err := ReadFixture(name)
	if err != nil {
		t.Fatalf("fixture %s: %v", name, err)
	}
	return s
}

// MustReadFixture is ReadFixture for a package variable: a fixture that
// does not read panics.
func MustReadFixture(name string) string {
	s, err := ReadFixture(name)
	if err != nil {
		panic(err)
	}
	return s
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// Nested is s (a YAML fixture) with each line but comments and blank ones
// indented by prefix and preceded by a newline, to append under a key of
// a manifest written in Go ("spec:\n  metrics:" + Nested(list, "  ")).
func Nested(s, prefix string) string {
	var b strings.Builder
	for _, line := range strings.Split(s, "\n") {
		if t := strings.TrimSpace(line); t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		b.WriteString("\n" + prefix + line)
	}
	return b.String()
}
