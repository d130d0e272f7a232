package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/fight"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/render"
)

// This file is where a run's end becomes the process's exit code: Exit
// maps the error a command returns (main calls it), and the *Code
// functions below map each command's report to the code its run returns.
// (explain-conflict's and diff's are with their runs.)

// Code is kubectl-ssa's exit status, as kubectl diff's: 0 nothing found,
// 1 found (conflicts, changes, findings), 2 and above errors.
type Code int

// The exit codes, documented in docs/reports.md.
const (
	CodeOK Code = 0
	// CodeFound: the apply would conflict, a handover is held, a check
	// found work.
	CodeFound Code = 1
	// CodeError: bad input, a missing object, a refused request.
	CodeError Code = 2
	// CodeVerifyDiffers: --verify found the prediction differs from the
	// server's dry run. CodePartial, the same number: some objects of a
	// write over many failed or were skipped.
	CodeVerifyDiffers Code = 3
	CodePartial       Code = 3
	// CodeNotVerified: the answer stands unchecked: --verify was asked
	// for and the server refused the dry run, or could not run it yet;
	// or admission not evaluated here matches the apply. main says it as
	// a warning.
	CodeNotVerified Code = 4
	// CodeControlledReset: the write succeeds but resets a field a
	// controller sets (an autoscaled workload's .spec.replicas): it sets
	// the field again after, and pods go meanwhile. main says it as a
	// warning.
	CodeControlledReset Code = 5
)

// ExitError carries an exit code to main. Err, when set, is printed as
// "error: ...". An error that is not an ExitError exits with CodeError.
type ExitError struct {
	Code Code
	Err  error
}

// StoppedError is a command over many objects stopped by a signal
// between two objects: Where says where (what was done, what was not,
// how to go on), in the one line main prints; Err is the cancellation,
// which main turns into 130 or 143.
type StoppedError struct {
	Where string
	Err   error
}

func (e *StoppedError) Error() string { return e.Where + ": " + e.Err.Error() }

func (e *StoppedError) Unwrap() error { return e.Err }

// stopped is the StoppedError of ctx's cancellation, if ctx is done.
func stopped(ctx context.Context, format string, args ...any) error {
	if ctx.Err() == nil {
		return nil
	}
	return &StoppedError{Where: fmt.Sprintf(format, args...), Err: ctx.Err()}
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// exit is an ExitError without a message (it was printed already).
func exit(c Code) error { return &ExitError{Code: c} }

// Exit prints err on stderr, as one "error: ..." line (or a warning, for
// the codes whose answer stands), and returns the process's exit code:
// 0 without an error, the ExitError's code, 128+the signal's number when
// sig (the signal that cancelled the command, if one did) stopped it,
// CodeError for any other error.
func Exit(stderr io.Writer, err error, sig os.Signal) int {
	if err == nil {
		return int(CodeOK)
	}
	if sig != nil && errors.Is(err, context.Canceled) {
		// One line, however many objects the command had left: where a
		// command over many stopped, when it says.
		msg := fmt.Sprintf("interrupted (%s)", sig)
		var stopped *StoppedError
		if errors.As(err, &stopped) {
			msg += ": " + stopped.Where
		}
		render.Error(stderr, errors.New(msg))
		return SignalCode(sig)
	}
	var exit *ExitError
	if errors.As(err, &exit) {
		switch {
		case exit.Err == nil:
		case exit.Code == CodeNotVerified, exit.Code == CodeControlledReset:
			// Not a failure: the answer stands, unchecked.
			render.Warning(stderr, exit.Err.Error())
		default:
			render.Error(stderr, exit.Err)
		}
		return int(exit.Code)
	}
	render.Error(stderr, err)
	return int(CodeError)
}

// SignalCode is the exit code of a process a signal ended: 128+its
// number, as a shell reports it.
func SignalCode(sig os.Signal) int {
	if s, ok := sig.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return int(CodeError)
}

// exitWith is the error a run returns for c: none for CodeOK.
func exitWith(c Code) error {
	if c == CodeOK {
		return nil
	}
	return exit(c)
}

// auditCode: 2 when a cluster could not be audited (failed of them),
// 1 for a finding at or above --fail-on.
func auditCode(rep *v1alpha1.AuditReport, failed int, failOn v1alpha1.Severity) Code {
	switch {
	case failed > 0:
		return CodeError
	case failOn != v1alpha1.SeverityNever && rep.Max() != "" && rep.Max().Rank() >= failOn.Rank():
		return CodeFound
	}
	return CodeOK
}

// migrationCode: 3 when objects failed or kinds could not be listed,
// 1 for --check with work to do.
func migrationCode(rep *v1alpha1.MigrationReport, check bool) Code {
	switch {
	case rep.Summary.Failed > 0 || len(rep.Unlisted) > 0:
		return CodePartial
	case check && rep.Summary.Migrated > 0:
		return CodeFound
	}
	return CodeOK
}

// migrationErrorCode is the code of a migration that ended on an error:
// 3 when some objects were done, 2 when nothing was written.
func migrationErrorCode(rep *v1alpha1.MigrationReport) Code {
	if rep == nil || rep.Summary.Scanned == 0 {
		return CodeError
	}
	return CodePartial
}

// undoCode: 3 when not everything was restored.
func undoCode(rep *v1alpha1.MigrationReport) Code {
	if rep.Summary.Skipped > 0 {
		return CodePartial
	}
	return CodeOK
}

// handoverCode: 2 when objects failed, 1 when --wait ran out with
// fields held (held safely, not yet taken).
func handoverCode(failed, held int) Code {
	switch {
	case failed > 0:
		return CodeError
	case held > 0:
		return CodeFound
	}
	return CodeOK
}

// watchCode: 1 when a fight was seen, 2 when objects could not be read
// and no fight was seen.
func watchCode(res fight.Result) Code {
	switch {
	case res.Seen:
		return CodeFound
	case res.Failed != nil:
		return CodeError
	}
	return CodeOK
}

// whoOwnsCode: 2 when objects could not be analysed (each said why).
func whoOwnsCode(failed int) Code {
	if failed > 0 {
		return CodeError
	}
	return CodeOK
}

// messageError is an error told in other words than its cause's (a
// report's message, a cause with its Go values left out), which keeps the
// cause for errors.Is and errors.As.
type messageError struct {
	msg string
	err error
}

func (e *messageError) Error() string { return e.msg }

func (e *messageError) Unwrap() error { return e.err }
