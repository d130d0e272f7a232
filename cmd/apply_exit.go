package cmd

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/remedy"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/render"
)

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

// notExactName names an object whose prediction is not exact, with the
// first reason (admission not evaluated here, validation not modelled):
// ok is false when it is exact.
func notExactName(o v1alpha1.ObjectRef, a *v1alpha1.AdmissionReport, unchecked []string) (string, bool) {
	switch {
	case a != nil && !a.Exact:
		return notExact(o, a), true
	case len(unchecked) > 0:
		return ownership.ObjectName(o.Kind, o.Namespace, o.Name) + " (" + unchecked[0] + ")", true
	}
	return "", false
}

// notExact names an object and the first reason its admission is not
// known here (a matching policy or webhook that may deny or change it, a
// built-in plugin, a list that could not be read).
func notExact(o v1alpha1.ObjectRef, a *v1alpha1.AdmissionReport) string {
	name := ownership.ObjectName(o.Kind, o.Namespace, o.Name)
	if len(a.Reasons) == 0 {
		return name
	}
	more := ""
	if len(a.Reasons) > 1 {
		more = fmt.Sprintf(", and %d more", len(a.Reasons)-1)
	}
	return fmt.Sprintf("%s (%s%s)", name, a.Reasons[0], more)
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
			check = t.Line([]string{"kubectl", "ssa", "explain-conflict"}, append(append(t.SSAInput(), t.ManagerFlag()...), "--verify")...)
		}
	}
	if len(names) > 0 {
		return &ExitError{Code: CodeNotVerified, Err: fmt.Errorf("no change predicted for %s, but admission or validation may change or refuse the apply: check with %s", strings.Join(names, ", "), check)}
	}
	return nil
}

// diffFound is exit 1 for what the diff found (the upgrade's deletes and
// refusals, said in the header; value changes, denials), or 5 for a
// controlled reset; nil when nothing.
func (o *diffOptions) diffFound(reports []*v1alpha1.DiffReport) error {
	if len(o.helm.deletes) > 0 || len(o.helm.refusals) > 0 {
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
