package cmd

import (
	"context"
	"io"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-ssa/kubectl-ssa/internal/kube"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/conflict"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/diff"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/render"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/render/review"
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
	var explanations []explained
	failed, err := p.eachApply(ctx, "explain-conflict", func(m kube.Manifest) (*unstructured.Unstructured, func(), error) {
		r, err := o.predict(ctx, p.src, m, opts, o.verify && o.snapshot.file == "")
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
			explanations = append(explanations, explained{report: &r.ConflictReport, source: m.Source})
		}, nil
	})
	if err != nil {
		return err
	}
	if o.verify && o.snapshot.file != "" {
		if err := o.snapshot.checkChanged(ctx, &o.applyInput, reports); err != nil {
			return err
		}
	}
	o.view = render.Options{Time: o.time.mode, Now: time.Now(), Palette: p.pal}
	o.failed = failed
	if err := printAll(o.printer, explanations, len(p.manifests) > 1); err != nil {
		return err
	}
	return explainExit(o.streams.ErrOut, failed, reports)
}

// explained is one object's explanation, with the manifest it came from
// (which the text view's suggested commands name).
type explained struct {
	report *v1alpha1.ConflictReport
	source string
}

// choosePrinter chooses the printer of -o, once: the reports as data, or
// as explanations (after the Helm release's header), with the palette
// run's prepare makes (o.view).
func (o *explainOptions) choosePrinter() {
	o.printer = choosePrinter(o.streams.Out, o.output.out, func(e explained) any { return e.report }, textView[explained]{
		header: func(w io.Writer) { o.snapshot.printHeader(w); o.printHelmHeader(w, false) },
		one: func(w io.Writer, e explained) error {
			render.ConflictExplanation(w, e.report, o.view, o.target(e.source, e.report))
			return nil
		},
		documents: reviewDocuments(func(es []explained) *review.Document { return o.reviewOf("explain-conflict", conflictObjects(es)) }).with(viewHTML, o.explainPage),
	})
}

// conflictObjects are the review objects of explanations.
func conflictObjects(es []explained) []review.Object {
	out := make([]review.Object, len(es))
	for i, e := range es {
		out[i] = review.FromConflict(e.report)
	}
	return out
}
