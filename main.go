// Command kubectl-ssa is the kubectl plugin "kubectl ssa": it makes
// Server-Side Apply field ownership visible, explainable and safe.
package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/klog/v2"

	"github.com/kubectl-ssa/kubectl-ssa/cmd"
	"github.com/kubectl-ssa/kubectl-ssa/internal/redact"
)

// grace is how long a command has, after the first SIGINT or SIGTERM
// cancelled its context, to stop by itself (finish the request in flight,
// print what it found) before the process exits anyway: some waits, in
// client libraries, do not take a context.
const grace = 5 * time.Second

func main() {
	deferFirstGC(firstGCAt)
	os.Exit(run())
}

// firstGCAt is how much memory the runtime may hold before the first
// garbage collection.
const firstGCAt = 32 << 20

// deferFirstGC holds the garbage collector back until the process holds
// limit bytes, then hands it back its usual pace (GOGC=100). A command on
// one object allocates about 15 MiB, mostly garbage, in well under a
// second: three collections on the way (the runtime starts at a 4 MiB
// heap goal) cost a third of its CPU time and save it a few MiB. Commands
// over many objects collect as before once past the limit. GOGC or
// GOMEMLIMIT set by the user win.
func deferFirstGC(limit int64) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	percent := debug.SetGCPercent(-1)
	debug.SetMemoryLimit(limit)
	// The first collection frees the sentinel and runs its finalizer.
	sentinel := new([64]byte)
	runtime.SetFinalizer(sentinel, func(*[64]byte) {
		debug.SetGCPercent(percent)
		debug.SetMemoryLimit(math.MaxInt64)
	})
}

// run executes the command with a context that the first SIGINT or
// SIGTERM cancels; a second signal, or the end of the grace period, ends
// the process with 128+the signal's number, as a shell reports a process
// a signal killed.
func run() int {
	// client-go logs through klog to standard error: discovery's
	// "couldn't get current server API group list" would stand before the
	// one error line that says the same, and a log line escapes the
	// Secret filter below.
	klog.SetLogger(logr.Discard())
	// Whatever reaches the user passes the filter that replaces the
	// Secret values this run has read (internal/redact).
	secrets := &redact.Set{}
	stdout, stderr := secrets.Writer(os.Stdout), secrets.Writer(os.Stderr)
	defer func() {
		_ = stdout.Flush()
		_ = stderr.Flush()
	}()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	streams := genericiooptions.IOStreams{In: os.Stdin, Out: stdout, ErrOut: stderr}
	done := make(chan error, 1)
	go func() { done <- cmd.Execute(ctx, streams, secrets) }()

	var sig os.Signal
	select {
	case err := <-done:
		return cmd.Exit(stderr, err, nil)
	case sig = <-sigs:
		cancel()
	}
	timer := time.NewTimer(grace)
	defer timer.Stop()
	select {
	case err := <-done:
		return cmd.Exit(stderr, err, sig)
	case <-sigs:
	case <-timer.C:
	}
	fmt.Fprintf(stderr, "error: interrupted (%s)\n", sig)
	return cmd.SignalCode(sig)
}
