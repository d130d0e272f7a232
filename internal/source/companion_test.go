//go:build unix

package source

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// script writes an executable shell script and makes it the companion.
func script(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "ssa-admission-eval")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv(EvaluatorEnv, p)
	return p
}

// gone waits until process pid has ended (or is a zombie its new parent
// has yet to reap).
func gone(pid int) bool {
	for i := 0; i < 100; i++ {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return true
			}
			if syscall.Kill(pid, 0) != nil {
				return true
			}
		} else if f := strings.Fields(string(b)); len(f) > 2 && f[2] == "Z" {
			return true
		}
		time.Sleep(50 * time.Millisecond)
	}
	return false
}

// pidIn reads the pid a script wrote to file.
func pidIn(t *testing.T, file string) int {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

const answer = `{"kind":"PolicyEvaluationResult","apiVersion":"ssa.kubectl-ssa.io/v1alpha1","warnings":[],"bindings":[]}`

func TestCompanionAnswers(t *testing.T) {
	script(t, "cat >/dev/null; echo '"+answer+"'")
	s := &Cluster{}
	out, _, err := s.evaluate(context.Background(), []byte("{}"))
	if err != nil || strings.TrimSpace(string(out)) != answer {
		t.Fatalf("answer %q, error %v", out, err)
	}
}

// A companion that hangs, with a child of its own holding its output, is
// killed with its process group at the end of the run's time; the
// evaluations after it are not run.
func TestCompanionHangsWithAChild(t *testing.T) {
	dir := t.TempDir()
	path := script(t, "sleep 600 & echo $! >"+dir+"/child\nsleep 600")
	s := &Cluster{}
	s.clock.budget = 300 * time.Millisecond
	_, _, err := s.evaluate(context.Background(), []byte("{}"))
	if err == nil || !strings.Contains(err.Error(), path+" did not answer within 300ms") || !strings.Contains(err.Error(), "no policy is evaluated for the rest of the run") {
		t.Fatalf("error %v, want a timeout", err)
	}
	if child := pidIn(t, dir+"/child"); !gone(child) {
		_ = syscall.Kill(child, syscall.SIGKILL)
		t.Errorf("the companion's child %d outlived it", child)
	}
	_, _, err = s.evaluate(context.Background(), []byte("{}"))
	if err == nil || !strings.Contains(err.Error(), "earlier in this run, and was not run again") {
		t.Fatalf("the next evaluation: error %v, want it not run", err)
	}
	(&policies{s: s, ctx: context.Background()}).prestart()
	if s.waiting.c != nil {
		t.Errorf("a companion was started ahead after the run's time ran out")
	}
}

// A child that leaves the companion's process group and holds its
// output is not waited for past WaitDelay.
func TestCompanionChildEscapesItsGroup(t *testing.T) {
	dir := t.TempDir()
	script(t, "setsid sleep 600 & echo $! >"+dir+"/child\nsleep 600")
	s := &Cluster{}
	s.clock.budget = 300 * time.Millisecond
	_, _, err := s.evaluate(context.Background(), []byte("{}"))
	t.Cleanup(func() { _ = syscall.Kill(pidIn(t, dir+"/child"), syscall.SIGKILL) })
	if err == nil || !strings.Contains(err.Error(), "did not answer within") {
		t.Fatalf("error %v, want a timeout", err)
	}
}

// An answer past maxAnswer is not read whole: the companion is stopped.
func TestCompanionFloods(t *testing.T) {
	script(t, "cat >/dev/null; echo '{'; exec yes")
	s := &Cluster{}
	_, _, err := s.evaluate(context.Background(), []byte("{}"))
	if err == nil || !strings.Contains(err.Error(), "answered more than 16 MiB") {
		t.Fatalf("error %v, want the answer refused", err)
	}
	if got := s.clock.halted(); got != nil {
		t.Errorf("an answer too large stops later evaluations: %v", got)
	}
}

func TestCompanionFails(t *testing.T) {
	for _, c := range []struct{ name, body, want string }{
		{"error line", "echo 'ssa-admission-eval: the request has no object' >&2\necho more >&2\nexit 2", "ssa-admission-eval: the request has no object"},
		{"silent exit", "exit 3", "running "},
		// Its first line; the request it did not read is not waited on.
		{"exits before reading", "yes | head -c 100000 >&2; exit 1", "y"},
	} {
		t.Run(c.name, func(t *testing.T) {
			script(t, c.body)
			s := &Cluster{}
			_, _, err := s.evaluate(context.Background(), make([]byte, 1<<20))
			if err == nil || !strings.HasPrefix(err.Error(), c.want) || len(err.Error()) > maxErrorOutput+100 {
				t.Fatalf("error %.200v, want %q", err, c.want)
			}
		})
	}
}

// The budget is the run's, whatever the number of objects: what one
// evaluation spent is not there for the next.
func TestCompanionClockIsTheRuns(t *testing.T) {
	c := &companionClock{budget: time.Hour}
	left, err := c.start()
	if err != nil || left != time.Hour {
		t.Fatalf("first: %v left, %v", left, err)
	}
	c.stop(nil)
	c.spent = 59 * time.Minute
	left, err = c.start()
	if err != nil || left > time.Minute {
		t.Fatalf("second: %v left, want at most a minute", left)
	}
	c.stop(errors.New("stopped"))
	if _, err := c.start(); err == nil || err.Error() != "stopped" {
		t.Fatalf("after a timeout: %v, want stopped", err)
	}
}

func TestBudgetFromEnv(t *testing.T) {
	for env, want := range map[string]time.Duration{"": companionBudget, "2s": 2 * time.Second, "-1s": companionBudget, "soon": companionBudget} {
		t.Setenv(evaluatorTimeoutEnv, env)
		if got := budgetFromEnv(); got != want {
			t.Errorf("%q: %v, want %v", env, got, want)
		}
	}
}
