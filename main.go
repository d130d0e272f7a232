// Command kubectl-ssa is the kubectl plugin "kubectl ssa": it makes
// Server-Side Apply field ownership visible, explainable and safe.
package main

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"syscall"

	"github.com/go-logr/logr"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/klog/v2"

	"github.com/kubectl-ssa/kubectl-ssa/cmd"
	"github.com/kubectl-ssa/kubectl-ssa/internal/redact"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/render"
)

func main() {
	os.Exit(run())
}

func run() int {
	// client-go logs through klog to standard error: discovery's
	// "couldn't get current server API group list" would stand before the
	// one error line that says the same, and a log line escapes the
	// Secret filter below.
	klog.SetLogger(logr.Discard())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// Whatever reaches the user passes the filter that replaces the
	// Secret values this run has read (internal/redact).
	stdout, stderr := redact.Seen.Writer(os.Stdout), redact.Seen.Writer(os.Stderr)
	defer func() {
		_ = stdout.Flush()
		_ = stderr.Flush()
	}()
	streams := genericiooptions.IOStreams{In: os.Stdin, Out: stdout, ErrOut: stderr}
	err := cmd.NewRootCmd(streams).ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	var exit *cmd.ExitError
	if errors.As(err, &exit) {
		if exit.Err != nil {
			render.Error(stderr, exit.Err)
		}
		return int(exit.Code)
	}
	render.Error(stderr, err)
	return int(cmd.CodeError)
}
