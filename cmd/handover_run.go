package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/kubectl-ssa/kubectl-ssa/internal/kube"
	"github.com/kubectl-ssa/kubectl-ssa/internal/source"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/conflict"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/handover"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/pathlang"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/render"
)

func (o *handoverOptions) run(ctx context.Context) error {
	// A handover over a selection with missing objects changes none.
	o.sel.In = o.streams.In
	o.sel.CommandFlags = o.commandFlags
	objs, _, err := o.sel.Resolve(ctx, o.configFlags, o.args)
	if err != nil {
		return err
	}
	c, err := o.cluster()
	if err != nil {
		return err
	}
	o.view = render.Options{Time: render.TimeRelative, Now: time.Now(), Palette: o.pal}
	failed, held, done := 0, 0, 0
	for i, obj := range objs {
		if err := stopped(ctx, "handover stopped before %s, object %d of %d (%d done; it and the %d after it not started): run the same command again to go on", kube.ObjectName(obj), i+1, len(objs), done, len(objs)-i-1); err != nil {
			return o.printStopped(err)
		}
		req, err := o.request(obj)
		if err != nil {
			return err
		}
		ri, _, err := c.Resource(obj)
		if err != nil {
			return err
		}
		rep, err := o.handoverOne(ctx, c, ri, obj, req)
		if err != nil && ctx.Err() != nil && errors.Is(err, context.Canceled) {
			// Its writes are done or not begun (handover.Run finishes
			// an object's steps): running again completes it.
			return o.printStopped(stopped(ctx, "handover stopped at %s, object %d of %d (%d done before it; the %d after it not started): run the same command again to finish", kube.ObjectName(obj), i+1, len(objs), done, len(objs)-i-1))
		}
		if err != nil {
			failed++
			render.Error(o.streams.ErrOut, err)
			if rep == nil {
				continue
			}
		} else {
			done++
		}
		if rep.Status == v1alpha1.HandoverHeld && o.wait {
			held++
		}
		if err := o.printer.print(rep, i == 0); err != nil {
			return err
		}
	}
	if err := o.printer.flush(len(objs) > 1, false); err != nil {
		return err
	}
	return exitWith(handoverCode(failed, held))
}

// request is the handover of obj that the flags ask for.
func (o *handoverOptions) request(obj *unstructured.Unstructured) (handover.Request, error) {
	req := handover.Request{From: o.from, FromSubresource: o.fromSubresource, To: o.to, Mode: v1alpha1.HandoverMode(o.mode), TempManager: o.tempManager, Wait: o.wait}
	if o.release {
		req.Mode, req.To = v1alpha1.HandoverRelease, ""
	}
	for _, f := range o.fields {
		p, err := pathlang.ParsePath(f, obj.Object)
		if err != nil {
			return req, fmt.Errorf("--field %s: %w", f, err)
		}
		req.Fields = append(req.Fields, p)
	}
	return req, nil
}

// handoverOne runs the handover of one object. Its error is the one line
// that says why it failed (the report's message when there is a report),
// or the cancellation.
func (o *handoverOptions) handoverOne(ctx context.Context, c *kube.Cluster, ri dynamic.ResourceInterface, obj *unstructured.Unstructured, req handover.Request) (*v1alpha1.HandoverReport, error) {
	dr := o.dr
	var progress func(v1alpha1.HandoverStep)
	if !o.output.isData() && dr == v1alpha1.DryRunNone {
		progress = handoverProgress(o.streams.ErrOut, kube.ObjectName(obj))
	}
	targets, hpaWarning := o.autoscaled(ctx, c, obj, req)
	hopts := handover.Options{DryRun: dr, Timeout: o.timeout, Progress: progress, ShowSecretValues: o.showSecrets, ControllerTargets: targets,
		NoControllerWarning: hpaWarning, CommandFlags: o.clusterFlags, Friendly: c.Friendly}
	rep, err := handover.Run(ctx, ri, obj.GetName(), req, hopts)
	if err == nil || errors.Is(err, context.Canceled) {
		return rep, err
	}
	msg := handover.FailureMessage(err, kube.ObjectName(obj), hopts)
	if rep != nil {
		msg = rep.Message
	}
	return rep, &messageError{msg: msg, err: err}
}

// printStopped prints the reports (as data: a text view has printed
// them) of the objects done before a signal stopped the run, and returns
// stop.
func (o *handoverOptions) printStopped(stop error) error {
	if err := o.printer.flush(true, false); err != nil {
		return err
	}
	return stop
}

// choosePrinter chooses the printer of -o, once: the reports as data, or
// each object's narrative as its handover ends (with o.view, which the
// run sets).
func (o *handoverOptions) choosePrinter() {
	o.printer = choosePrinter(o.streams.Out, o.output.out, nil, textView[*v1alpha1.HandoverReport]{
		one: func(w io.Writer, rep *v1alpha1.HandoverReport) error {
			render.HandoverNarrative(w, rep, o.view)
			return nil
		},
	})
}

// handoverProgress prints a line on w as each step of a handover of the
// object finishes.
func handoverProgress(w io.Writer, object string) func(v1alpha1.HandoverStep) {
	return func(s v1alpha1.HandoverStep) { render.HandoverProgress(w, object, s) }
}

// autoscaled tells, for a handover of .spec.replicas to
// kube-controller-manager, whether a HorizontalPodAutoscaler targets the
// object (then the handover is done once the fields are safe, whether or
// not the autoscaler has written them yet), or warns that none does:
// nothing will write the field, and the temporary manager keeps holding
// it.
func (o *handoverOptions) autoscaled(ctx context.Context, c *kube.Cluster, obj *unstructured.Unstructured, req handover.Request) (bool, string) {
	if o.release || o.to != v1alpha1.AutoscalerController {
		return false, ""
	}
	replicas := false
	for _, p := range req.Fields {
		replicas = replicas || pathlang.Path(p).String() == ".spec.replicas"
	}
	if !replicas {
		return false, ""
	}
	if o.hpaSource == nil {
		// One per run: it lists a namespace's autoscalers once.
		o.hpaSource = source.NewCluster(c, "")
	}
	hpas, warning := conflict.AutoscalersOf(ctx, o.hpaSource, obj)
	if warning != "" || len(hpas) > 0 {
		return len(hpas) > 0, warning
	}
	temp := o.tempManager
	if temp == "" {
		temp = handover.DefaultTempManager
	}
	return false, fmt.Sprintf("no HorizontalPodAutoscaler in namespace %s targets %s: kube-controller-manager will not write .spec.replicas, and %q keeps holding it (create the HPA, or hand the field to another manager)", obj.GetNamespace(), kube.ObjectName(obj), temp)
}
