package cmd

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-ssa/kubectl-ssa/internal/kube"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/conflict"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/diff"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/render"
)

func (o *explainOptions) run(ctx context.Context) error {
	p, err := o.prepare(ctx)
	if err != nil {
		return err
	}
	opts := p.opts
	opts.Result = diff.Result
	// Every object that can be simulated is explained; the others are
	// errors at the end, as kubectl apply goes on after a bad object.
	var reports []*v1alpha1.ConflictReport
	var sources []string
	failed, err := p.eachApply(ctx, "explain-conflict", func(m kube.Manifest) (*unstructured.Unstructured, func(), error) {
		r, err := o.predict(ctx, p.src, m, opts, o.verify)
		if err != nil {
			return nil, nil, err
		}
		var result *unstructured.Unstructured
		if r.Message == "" {
			result = r.Result
		}
		return result, func() {
			if !o.showSecrets {
				r.RedactSecrets()
			}
			r.Refused = o.helm.refusal(m)
			r.Resolutions = conflict.Resolutions(r, o.target(m.Source, &r.ConflictReport))
			reports = append(reports, &r.ConflictReport)
			sources = append(sources, m.Source)
		}, nil
	})
	if err != nil {
		return err
	}
	if err := o.print(p, reports, sources); err != nil {
		return err
	}
	return exitForApply(o.streams.ErrOut, failed,
		func() error { return verifyExit(reports) },
		func() error { return explainFound(reports) },
		func() error { return controlledResets(reports) },
		func() error { return inexact(reports) })
}

// print prints the reports, as data or as explanations.
func (o *explainOptions) print(p *prepared, reports []*v1alpha1.ConflictReport, sources []string) error {
	switch {
	case len(reports) == 0:
	case o.output.out.IsData():
		items := make([]any, len(reports))
		for i, r := range reports {
			items[i] = r
		}
		return o.output.out.Print(o.streams.Out, items, len(p.manifests) > 1)
	default:
		ropts := render.Options{Time: o.time.mode, Now: time.Now(), Palette: p.pal}
		o.printHelmHeader(o.streams.Out, false)
		for i, r := range reports {
			if i > 0 {
				fmt.Fprintln(o.streams.Out)
			}
			render.ConflictExplanation(o.streams.Out, r, ropts, o.target(sources[i], r))
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
