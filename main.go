// Command kubectl-ssa is the kubectl plugin "kubectl ssa": it makes
// Server-Side Apply field ownership visible, explainable and safe.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-ssa/kubectl-ssa/cmd"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/render"
)

// grace is how long a command has, after the first SIGINT or SIGTERM
// cancelled its context, to stop by itself (finish the request in flight,
// print what it found) before the process exits anyway: some waits, in
// client libraries, do not take a context.
const grace = 5 * time.Second

func main() {
	os.Exit(run())
}

// run executes the command with a context that the first SIGINT or
// SIGTERM cancels; a second signal, or the end of the grace period, ends
// the process with 128+the signal's number, as a shell reports a process
// a signal killed.
func run() int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	streams := genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
	done := make(chan error, 1)
	go func() { done <- cmd.NewRootCmd(streams).ExecuteContext(ctx) }()

	var sig os.Signal
	select {
	case err := <-done:
		return exitCode(err, nil)
	case sig = <-sigs:
		cancel()
	}
	timer := time.NewTimer(grace)
	defer timer.Stop()
	select {
	case err := <-done:
		return exitCode(err, sig)
	case <-sigs:
	case <-timer.C:
	}
	fmt.Fprintf(os.Stderr, "error: interrupted (%s)\n", sig)
	return signalCode(sig)
}

// exitCode prints err and returns the exit code it carries; sig is the
// signal that cancelled the command, if one did.
func exitCode(err error, sig os.Signal) int {
	if err == nil {
		return int(cmd.CodeOK)
	}
	if sig != nil && errors.Is(err, context.Canceled) {
		fmt.Fprintf(os.Stderr, "error: interrupted (%s)\n", sig)
		return signalCode(sig)
	}
	var exit *cmd.ExitError
	if errors.As(err, &exit) {
		if exit.Err != nil {
			render.Error(os.Stderr, exit.Err)
		}
		return int(exit.Code)
	}
	render.Error(os.Stderr, err)
	return int(cmd.CodeError)
}

func signalCode(sig os.Signal) int {
	if s, ok := sig.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return int(cmd.CodeError)
}
