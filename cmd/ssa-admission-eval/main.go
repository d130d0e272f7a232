// Command ssa-admission-eval is kubectl-ssa's companion: it evaluates the
// admission policies of one apply with the apiserver's own admission code
// (k8s.io/apiserver's policy dispatchers and their CEL). kubectl-ssa runs
// it, from the directory it runs from, only when a policy matches: the
// apiserver's CEL stack would cost every kubectl-ssa command about 6 ms
// and 8 MiB to start.
//
// It reads a PolicyEvaluationRequest (JSON) on standard input and writes
// a PolicyEvaluationResult (JSON) on standard output; it reads no cluster.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/kubectl-ssa/kubectl-ssa/internal/celeval"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/admission"
)

// usage is what a person who runs it by hand reads.
const usage = `ssa-admission-eval evaluates the admission policies of one apply for
kubectl-ssa, which runs it when a policy matches ("kubectl ssa
explain-conflict", "kubectl ssa diff"). It is not meant to be run by hand:
it reads a PolicyEvaluationRequest (JSON) on standard input and writes a
PolicyEvaluationResult (JSON) on standard output.
`

func main() {
	if len(os.Args) == 2 && (os.Args[1] == "-h" || os.Args[1] == "--help") {
		fmt.Fprint(os.Stdout, usage)
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := evaluate(ctx, os.Args[1:], os.Stdin, os.Stdout)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "ssa-admission-eval:", err)
		os.Exit(2)
	}
}

// evaluate is run with a last resort: a panic (a request the checks let
// through that the dispatchers can't take) is one error line and a
// non-zero exit, which kubectl-ssa reports as policies not evaluated,
// rather than a stack trace it would have to read as an answer.
func evaluate(ctx context.Context, args []string, in io.Reader, out io.Writer) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("internal error: %v (please report this as a kubectl-ssa bug, with the policies that match)", r)
		}
	}()
	return run(ctx, args, in, out)
}

func run(ctx context.Context, args []string, in io.Reader, out io.Writer) error {
	if len(args) > 0 {
		return fmt.Errorf("it takes no arguments: it reads a %s on standard input (see --help)", admission.PolicyRequestKind)
	}
	if f, ok := in.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			return fmt.Errorf("standard input is a terminal: it reads a %s that kubectl-ssa writes (see --help)", admission.PolicyRequestKind)
		}
	}
	var req admission.PolicyRequest
	dec := json.NewDecoder(in)
	dec.UseNumber()
	if err := dec.Decode(&req); err != nil {
		return fmt.Errorf("reading the request: %w", err)
	}
	if req.Kind != admission.PolicyRequestKind || req.APIVersion != admission.PolicyAPIVersion {
		return fmt.Errorf("the input is not a %s of %s (apiVersion %q, kind %q): kubectl-ssa and ssa-admission-eval come from different builds, or it was run by hand", admission.PolicyRequestKind, admission.PolicyAPIVersion, req.APIVersion, req.Kind)
	}
	res, err := celeval.Evaluate(ctx, &req)
	if err != nil {
		return err
	}
	return json.NewEncoder(out).Encode(res)
}
