package source

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"
)

// EvaluatorEnv names the companion executable when it is not beside
// kubectl-ssa (tests, packagers).
const EvaluatorEnv = "KUBECTL_SSA_ADMISSION_EVAL"

// evaluatorTimeoutEnv, a Go duration, replaces companionBudget. It is
// for tests, which replace the companion with one that hangs, and is
// not documented to users: nothing but a misbehaving companion needs it.
const evaluatorTimeoutEnv = "KUBECTL_SSA_ADMISSION_EVAL_TIMEOUT"

// companionBudget bounds the time a run waits on the companion, all its
// evaluations together: CEL's cost budgets bound the expressions, so only
// a companion that misbehaves comes near it, and a run of many objects
// does not give each its own minute.
const companionBudget = time.Minute

// maxAnswer caps the companion's answer: the object after the mutating
// policies (the apiserver takes requests of at most 3 MiB), its
// warnings and messages. More is not an answer, and is not kept.
const maxAnswer = 16 << 20

// maxErrorOutput is how much of the companion's standard error is kept:
// its error is one line.
const maxErrorOutput = 4 << 10

// companionWaitDelay is how long the companion's output may stay open
// once it has exited or been killed (a child it left, outside its
// process group, holding it) before kubectl-ssa closes it.
const companionWaitDelay = 2 * time.Second

// evaluatorName is the companion's file name.
func evaluatorName() string {
	if runtime.GOOS == "windows" {
		return "ssa-admission-eval.exe"
	}
	return "ssa-admission-eval"
}

// evaluatorPath finds the companion: $KUBECTL_SSA_ADMISSION_EVAL, else
// beside the running executable (a release and krew install them side by
// side). PATH is not searched: what runs is what was shipped with it.
func evaluatorPath() (string, error) {
	if p := os.Getenv(EvaluatorEnv); p != "" {
		if fi, err := os.Stat(p); err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 && runtime.GOOS != "windows" {
			return "", fmt.Errorf("%s=%s is not an executable file: set it to ssa-admission-eval, or unset it to use the one beside kubectl-ssa", EvaluatorEnv, p)
		}
		return p, nil
	}
	self, err := os.Executable()
	if err != nil {
		return "", err
	}
	if resolved, err := filepath.EvalSymlinks(self); err == nil {
		self = resolved
	}
	p := filepath.Join(filepath.Dir(self), evaluatorName())
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("%s is not installed beside %s (it comes with every release; `make build` builds it): admission policies are matched, not evaluated", evaluatorName(), self)
	}
	return p, nil
}

// companion is one run of the companion executable, in a process group
// of its own: killing it kills what it started too.
type companion struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	out    cappedBuffer
	stderr cappedBuffer
	path   string
}

func startCompanion(ctx context.Context) (*companion, error) {
	path, err := evaluatorPath()
	if err != nil {
		return nil, err
	}
	c := &companion{path: path, cmd: exec.CommandContext(ctx, path)}
	c.out = cappedBuffer{max: maxAnswer, full: func() { _ = c.kill() }}
	c.stderr = cappedBuffer{max: maxErrorOutput}
	c.cmd.Stdout, c.cmd.Stderr = &c.out, &c.stderr
	ownProcessGroup(c.cmd)
	c.cmd.Cancel = c.kill
	c.cmd.WaitDelay = companionWaitDelay
	if c.stdin, err = c.cmd.StdinPipe(); err != nil {
		return nil, err
	}
	if err := c.cmd.Start(); err != nil {
		return nil, fmt.Errorf("running %s: %w", path, err)
	}
	return c, nil
}

// kill kills the companion and its process group.
func (c *companion) kill() error {
	return killProcessGroup(c.cmd.Process)
}

// errTimedOut is a companion that did not answer within the time left.
var errTimedOut = errors.New("timed out")

// answer sends the request in and returns the answer, waiting at most
// left.
func (c *companion) answer(in []byte, left time.Duration) ([]byte, error) {
	var timedOut atomic.Bool
	timer := time.AfterFunc(left, func() {
		timedOut.Store(true)
		_ = c.kill()
	})
	// Written beside the wait: a companion that does not read its input
	// must not block the write past its kill (Wait closes the pipe).
	var write errgroup.Group
	write.Go(func() error {
		_, err := c.stdin.Write(in)
		return errors.Join(err, c.stdin.Close())
	})
	err := c.cmd.Wait()
	timer.Stop()
	werr := write.Wait()
	switch {
	case timedOut.Load():
		return nil, errTimedOut
	case c.out.over:
		return nil, fmt.Errorf("%s answered more than %d MiB, which no answer of it is: it was stopped; check that it is the ssa-admission-eval of this kubectl-ssa release", c.path, maxAnswer>>20)
	case err != nil:
		if msg := firstLine(c.stderr.buf.String()); msg != "" {
			return nil, errors.New(msg)
		}
		return nil, fmt.Errorf("running %s: %w", c.path, err)
	case werr != nil:
		return nil, fmt.Errorf("writing the request to %s: %w", c.path, werr)
	}
	return c.out.buf.Bytes(), nil
}

// firstLine is the first non-blank line of a companion's error output.
func firstLine(s string) string {
	for _, line := range strings.Split(s, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			return line
		}
	}
	return ""
}

// cappedBuffer keeps what is written up to max bytes. Past it, it calls
// full (if set) once and fails the write, which ends the copy from the
// companion; without full, it drops the rest and goes on reading.
type cappedBuffer struct {
	buf  bytes.Buffer
	max  int
	full func()
	over bool
}

func (b *cappedBuffer) Write(p []byte) (int, error) {
	room := b.max - b.buf.Len()
	if len(p) <= room {
		return b.buf.Write(p)
	}
	b.buf.Write(p[:room])
	if b.full == nil {
		return len(p), nil
	}
	if !b.over {
		b.over = true
		b.full()
	}
	return room, errAnswerTooLarge
}

var errAnswerTooLarge = errors.New("the answer is too large")

// companionClock is the run's budget of time waiting on the companion
// (companionBudget): its clock runs while an evaluation waits. The first
// evaluation that outlasts it stops every later one.
type companionClock struct {
	mu      sync.Mutex
	budget  time.Duration
	spent   time.Duration
	waiting int
	since   time.Time
	stopped error
}

// start starts a wait: the time left, or why no evaluation runs.
func (c *companionClock) start() (time.Duration, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped != nil {
		return 0, c.stopped
	}
	if c.budget == 0 {
		c.budget = budgetFromEnv()
	}
	now := time.Now()
	if c.waiting == 0 {
		c.since = now
	}
	c.waiting++
	return c.budget - c.spent - now.Sub(c.since), nil
}

// stop ends a wait; stopped, when set, is why no later evaluation runs.
func (c *companionClock) stop(stopped error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.waiting--
	if c.waiting == 0 {
		c.spent += time.Since(c.since)
	}
	if stopped != nil && c.stopped == nil {
		c.stopped = stopped
	}
}

// halted is why no evaluation runs any more (nil: they do).
func (c *companionClock) halted() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stopped
}

// budgetFromEnv is companionBudget, or $KUBECTL_SSA_ADMISSION_EVAL_TIMEOUT
// when it is a positive duration.
func budgetFromEnv() time.Duration {
	if d, err := time.ParseDuration(os.Getenv(evaluatorTimeoutEnv)); err == nil && d > 0 {
		return d
	}
	return companionBudget
}

// evaluate has a companion (the one started ahead, else a new one)
// answer in, within what is left of the run's budget; path is the
// companion's. After a timeout no companion is run again: the objects
// left are said not evaluated.
func (s *Cluster) evaluate(ctx context.Context, in []byte) (out []byte, path string, err error) {
	left, err := s.clock.start()
	if err != nil {
		return nil, "", err
	}
	w := &s.waiting
	w.mu.Lock()
	c := w.c
	w.c = nil
	w.mu.Unlock()
	if c == nil {
		if c, err = startCompanion(ctx); err != nil {
			s.clock.stop(nil)
			return nil, "", err
		}
	}
	out, err = c.answer(in, left)
	if errors.Is(err, errTimedOut) {
		budget := s.clock.budget
		s.clock.stop(fmt.Errorf("%s did not answer within %s earlier in this run, and was not run again", c.path, budget))
		return nil, c.path, fmt.Errorf("%s did not answer within %s (this run's time for it): it was stopped, and no policy is evaluated for the rest of the run; run again, and if it recurs report it as a kubectl-ssa bug with the policies that match", c.path, budget)
	}
	s.clock.stop(nil)
	return out, c.path, err
}
