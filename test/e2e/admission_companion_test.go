package e2e

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/rand"
)

// A companion that misbehaves (hangs with a child holding its output,
// floods it, exits non-zero) leaves the objects it should have evaluated
// not exact (exit 4, each named with why), in bounded memory; after a
// timeout no companion runs again in the run. Each companion is a shell
// script named by KUBECTL_SSA_ADMISSION_EVAL, with the run's time for it
// shortened by KUBECTL_SSA_ADMISSION_EVAL_TIMEOUT (a hidden variable
// for tests).
func TestAdmissionCompanionMisbehaves(t *testing.T) {
	ns := namespace(t)
	name := "e2e-companion-" + rand.String(5)
	clusterObject(t, `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: `+name+`}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [configmaps]}
    namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: `+ns+`}}
  validations:
  - expression: "!has(object.data) || object.data.size() < 5"
`)
	clusterObject(t, "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicyBinding\nmetadata: {name: "+name+"}\nspec: {policyName: "+name+", validationActions: [Deny]}\n")
	dir := t.TempDir()
	manifest := filepath.Join(dir, "three.yaml")
	var docs []string
	for _, n := range []string{"one", "two", "three"} {
		docs = append(docs, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: "+n+"}\ndata: {k: v}\n")
	}
	writeFile(t, manifest, strings.Join(docs, "---\n"))
	// The policy evaluated: the run this test changes the companion of.
	mustSSA(t, 0, "explain-conflict", "-n", ns, "-f", manifest)

	child := filepath.Join(dir, "child")
	cases := []struct {
		name, script string
		// want is in the error line, for the first object; later, for
		// the others (empty: the same as want).
		want, later string
	}{
		{"hangs with a child holding its output", "sleep 600 & echo $! >" + child + "\nsleep 600",
			"did not answer within 2s (this run's time for it): it was stopped", "did not answer within 2s earlier in this run, and was not run again"},
		{"hangs with a child out of its process group holding its output", "setsid sleep 600 & echo $! >" + child + "\nsleep 600",
			"did not answer within 2s (this run's time for it): it was stopped", "did not answer within 2s earlier in this run, and was not run again"},
		{"floods its output", "cat >/dev/null\nhead -c 300000000 /dev/zero", "answered more than 16 MiB", ""},
		{"exits non-zero", "echo 'it broke' >&2\nexit 3", "admission policies could not be evaluated here: it broke", ""},
	}
	for _, c := range cases {
		t.Run(strings.ReplaceAll(c.name, " ", "-"), func(t *testing.T) {
			_ = os.Remove(child)
			t.Cleanup(func() { killChild(child) })
			companion := filepath.Join(t.TempDir(), "ssa-admission-eval")
			if err := os.WriteFile(companion, []byte("#!/bin/sh\n"+c.script+"\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			r := ssaBounded(t, []string{"KUBECTL_SSA_ADMISSION_EVAL=" + companion, "KUBECTL_SSA_ADMISSION_EVAL_TIMEOUT=2s"}, "explain-conflict", "-n", ns, "-f", manifest)
			if r.code != 4 || !strings.Contains(r.stderr, "is not exact") {
				t.Fatalf("exit %d, want 4 (not exact)\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			later := c.later
			if later == "" {
				later = c.want
			}
			for i, n := range []string{"one", "two", "three"} {
				want := later
				if i == 0 {
					want = c.want
				}
				_, after, found := strings.Cut(r.stderr, "ConfigMap/"+ns+"/"+n+" (")
				if !found || !strings.Contains(after, want) {
					t.Errorf("ConfigMap %s: the error does not say %q\n%s", n, want, r.stderr)
				}
			}
			// The run's peak memory: the first 16 MiB of a flood read,
			// not 300 MB (1.09 GB before the cap).
			if r.maxRSS > 300<<20 {
				t.Errorf("peak memory %d MiB, want it bounded (under 300 MiB)", r.maxRSS>>20)
			}
			t.Logf("peak memory %d MiB\n%s", r.maxRSS>>20, r.stderr)
		})
	}
}

// boundedResult is a run's result and its peak memory.
type boundedResult struct {
	result
	maxRSS int64
}

// ssaBounded runs kubectl-ssa as ssaEnv does, but fails the test if it
// has not ended after a long while (a hang is the bug under test, and
// must not hold the suite to its timeout), and reports its peak memory.
func ssaBounded(t *testing.T, environ []string, args ...string) boundedResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "kubectl-ssa", args...)
	cmd.Env = append(os.Environ(), environ...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.WaitDelay = 10 * time.Second
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("kubectl-ssa %v did not end: it was killed\n%s", args, errb.String())
	}
	code := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatalf("running kubectl-ssa %v: %v", args, err)
	}
	r := boundedResult{result: result{stdout: out.String(), stderr: errb.String(), code: code}}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		r.maxRSS = ru.Maxrss << 10 // KiB on Linux
	}
	return r
}

// killChild kills the process whose pid a companion script wrote to
// file, if it wrote one.
func killChild(file string) {
	b, err := os.ReadFile(file)
	if err != nil {
		return
	}
	if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid > 0 {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}
