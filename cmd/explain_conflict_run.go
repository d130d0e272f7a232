package cmd

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-ssa/kubectl-ssa/internal/kube"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/conflict"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/diff"
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
	return explainExit(o.streams.ErrOut, failed, reports)
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
