package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/fight"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/remedy"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/render"
)

// This file is where a run's end becomes the process's exit code: Exit
// maps the error a command returns (main calls it), and the functions
// below map each command's report to the code its run returns (the *Code
// functions; explainExit and diffExit, which also say why on stderr).

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
	// CodeSnapshotTooOld: --snapshot is older than --max-age.
	CodeSnapshotTooOld Code = 6
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
	if rep.Summary.Skipped > 0 || rep.Summary.Failed > 0 {
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

// explainExit is how explain-conflict ends: the objects that could not
// be predicted, then what --verify found (3, 4), a conflict or a denial
// (1), a controlled reset (5), a prediction that is not exact (4).
func explainExit(errOut io.Writer, failed []error, reports []*v1alpha1.ConflictReport) error {
	return exitForApply(errOut, failed,
		func() error { return verifyExit(reports) },
		func() error { return snapshotChanged(reports) },
		func() error { return explainFound(reports) },
		func() error { return controlledResets(reports) },
		func() error { return inexact(reports) })
}

// diffExit is how diff ends: the objects that could not be predicted,
// then what the diff found (1, or 5 for a controlled reset; helmFound:
// the upgrade's deletes and refusals), then no change predicted that is
// not exact (4). With KUBECTL_EXTERNAL_DIFF (external), the diff
// program's answer (externalErr), as with kubectl diff.
func diffExit(errOut io.Writer, failed []error, reports []*v1alpha1.DiffReport, targets []remedy.Target, helmFound, external bool, externalErr error) error {
	if external {
		return exitForApply(errOut, failed, func() error { return externalErr })
	}
	return exitForApply(errOut, failed,
		func() error { return diffFound(reports, helmFound) },
		func() error { return diffNotExact(reports, targets) })
}

// exitForApply is how explain-conflict and diff end, as kubectl diff
// does: the errors of the objects that could not be predicted first (each
// said, the last returned), then the first of the checks, in the
// command's order, that has something to say (an *ExitError), else 0.
func exitForApply(errOut io.Writer, failed []error, checks ...func() error) error {
	if len(failed) > 0 {
		for _, e := range failed[:len(failed)-1] {
			render.Error(errOut, e)
		}
		return failed[len(failed)-1]
	}
	for _, check := range checks {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

// verifyExit is what --verify found: 3 when the server's dry run differs
// from the prediction, 4 when it was refused or not run.
func verifyExit(reports []*v1alpha1.ConflictReport) error {
	refused, notRun := 0, 0
	for _, r := range reports {
		switch {
		case r.Verify == nil:
		case r.Verify.Status == v1alpha1.VerifyDiffers && len(r.Unchecked) > 0:
			return &ExitError{Code: CodeVerifyDiffers, Err: errors.New("the server's dry run differs from the prediction (see the report): validation not modelled here (the report's unchecked) refused or changed the apply")}
		case r.Verify.Status == v1alpha1.VerifyDiffers:
			return &ExitError{Code: CodeVerifyDiffers, Err: errors.New("the local prediction differs from the server's dry run (see the report): please report this as a kubectl-ssa bug")}
		case r.Verify.Status == v1alpha1.VerifyRefused:
			refused++
		case r.Verify.Status == v1alpha1.VerifyNotRun:
			notRun++
		}
	}
	if refused > 0 {
		return &ExitError{Code: CodeNotVerified, Err: fmt.Errorf("--verify: the server refused the dry run of %d of %d object(s) (it needs patch permission): the prediction stands unverified", refused, len(reports))}
	}
	if notRun > 0 {
		return &ExitError{Code: CodeNotVerified, Err: fmt.Errorf("--verify: %d of %d object(s) can't be dry-run before what the input applies ahead of them exists (a Namespace, or what a Pod's admission reads: see each report's verify reason): their prediction stands unverified (apply those first, then verify again)", notRun, len(reports))}
	}
	return nil
}

// explainFound is exit 1 when an apply conflicts, admission denies it or
// Helm refuses it.
func explainFound(reports []*v1alpha1.ConflictReport) error {
	for _, r := range reports {
		denied := r.Admission != nil && r.Admission.Denied != ""
		// The message is a conflict's, or the denial's.
		conflicts := r.Message != "" && (!denied || r.Message != r.Admission.Denied)
		if r.Verify != nil && r.Verify.Status == v1alpha1.VerifyResolved {
			// The server's answer stands for what was not known here.
			denied = r.Verify.ServerDenied != ""
		}
		if conflicts || denied || r.Refused != nil {
			return exit(CodeFound)
		}
	}
	return nil
}

// controlledResets is exit 5 when a write resets a field a controller
// sets (ConflictReport.ControlledResets), named with the first of them.
func controlledResets(reports []*v1alpha1.ConflictReport) error {
	var names []string
	var first string
	for _, r := range reports {
		if len(r.ControlledResets) == 0 {
			continue
		}
		name := ownership.ObjectName(r.Object.Kind, r.Object.Namespace, r.Object.Name)
		names = append(names, name)
		if first == "" {
			first = render.ControlledReset(name, r.ControlledResets[0], r.HelmUpgrade)
		}
	}
	if len(names) == 0 {
		return nil
	}
	more := ""
	if len(names) > 1 {
		more = fmt.Sprintf(" (and %d more object(s): %s)", len(names)-1, strings.Join(names[1:], ", "))
	}
	return &ExitError{Code: CodeControlledReset, Err: fmt.Errorf("%s%s: see the ways out in the report, and take one before you apply", first, more)}
}

// inexact is exit 4 when admission that is not evaluated here matches an
// apply that the server's dry run did not check (--verify).
func inexact(reports []*v1alpha1.ConflictReport) error {
	var names []string
	for _, r := range reports {
		unverified := r.Verify == nil || r.Verify.Status != v1alpha1.VerifyAgrees && r.Verify.Status != v1alpha1.VerifyResolved
		if name, ok := notExactName(r.Object, r.Admission, r.Unchecked); ok && unverified {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return nil
	}
	return &ExitError{Code: CodeNotVerified, Err: fmt.Errorf("the prediction of %s is not exact: admission or validation may change or refuse the apply; add --verify to have the server's dry run check it", strings.Join(names, ", "))}
}

// diffNotExact is exit 4 when no change is predicted but admission or
// validation not known here may change or refuse the apply, with the
// explain-conflict --verify that checks it.
func diffNotExact(reports []*v1alpha1.DiffReport, targets []remedy.Target) error {
	var names []string
	var check remedy.Command
	for i, r := range reports {
		name, ok := notExactName(r.Object, r.Admission, r.Unchecked)
		if !ok {
			continue
		}
		names = append(names, name)
		if check == nil {
			t := targets[i]
			check = t.InputLine([]string{"kubectl", "ssa", "explain-conflict"}, append(append(t.SSAInput(), t.ManagerFlag()...), "--verify")...)
		}
	}
	if len(names) > 0 {
		return &ExitError{Code: CodeNotVerified, Err: fmt.Errorf("no change predicted for %s, but admission or validation may change or refuse the apply: check with %s", strings.Join(names, ", "), check)}
	}
	return nil
}

// diffFound is exit 1 for what the diff found (helmFound: the upgrade's
// deletes and refusals, said in the header; value changes, denials), or 5 for a
// controlled reset; nil when nothing.
func diffFound(reports []*v1alpha1.DiffReport, helmFound bool) error {
	if helmFound {
		return exit(CodeFound)
	}
	if err := diffControlledResets(reports); err != nil {
		return err
	}
	for _, r := range reports {
		if r.HasChanges() || r.Admission != nil && r.Admission.Denied != "" {
			return exit(CodeFound)
		}
	}
	return nil
}

// diffControlledResets is exit 5 when an apply that succeeds resets a field
// a controller sets (a conflict or a denial is exit 1: nothing is written).
func diffControlledResets(reports []*v1alpha1.DiffReport) error {
	var as []*v1alpha1.ConflictReport
	for _, r := range reports {
		if len(r.Conflicts) > 0 || r.Admission != nil && r.Admission.Denied != "" {
			return nil
		}
		as = append(as, &v1alpha1.ConflictReport{ApplyMeta: r.ApplyMeta, ControlledResets: r.ControlledResets, HelmUpgrade: r.HelmUpgrade})
	}
	return controlledResets(as)
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
