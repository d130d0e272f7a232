package handover

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kubectl-ssa/kubectl-ssa/internal/shell"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/pathlang"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/write"
)

// maxSteps bounds the writes of one run: a plan has at most four, and a
// step that did not do what it planned must not be sent again and again.
const maxSteps = 10

// Options tune Run.
type Options struct {
	DryRun v1alpha1.DryRun
	// Timeout bounds the wait for the controller.
	Timeout time.Duration
	// Poll is the interval of the wait (default 1s).
	Poll time.Duration
	// Backoff paces the re-reads after 409 Conflict (default
	// write.DefaultBackoff).
	Backoff *wait.Backoff
	Now     func() time.Time
	// Progress is told about each step as it finishes.
	Progress func(v1alpha1.HandoverStep)
	// Manager names the writes that only change managedFields.
	Manager string
	// ShowSecretValues puts a Secret's values in messages; they are
	// redacted otherwise.
	ShowSecretValues bool
	// ControllerTargets says that the controller of a handover to a
	// controller acts on the object (an HPA targets it): then fields it
	// has not written yet, held and safe, end handed-over, not held.
	ControllerTargets bool
	// NoControllerWarning is said in the report's warnings when a
	// handover to a controller ends without the controller owning the
	// fields (no HPA targets the object, say).
	NoControllerWarning string
	// CommandFlags are the user's connection flags, put into the fix
	// commands that errors name.
	CommandFlags []string
	// Friendly rewords an API error for messages (nil: as it is).
	Friendly func(error) error
}

// Run executes a handover on the object name. Before every step it reads
// the object and plans again, so what another writer changed in between is
// taken into account and never overwritten; every write carries the
// resourceVersion it was planned from.
//
// When it fails with a report (a step failed), the report says so in its
// status and message; its Secret values are redacted unless
// ShowSecretValues.
func Run(ctx context.Context, c dynamic.ResourceInterface, name string, req Request, opts Options) (*v1alpha1.HandoverReport, error) {
	rep, err := run(ctx, c, name, req, opts)
	if rep == nil {
		return nil, err
	}
	if err != nil {
		rep.Status = v1alpha1.HandoverFailed
		rep.Message = FailureMessage(err, ownership.ObjectName(rep.Object.Kind, rep.Object.Namespace, rep.Object.Name), opts)
	}
	if !opts.ShowSecretValues {
		RedactSecrets(rep)
	}
	if opts.NoControllerWarning != "" && rep.Mode == v1alpha1.HandoverController && rep.Status != v1alpha1.HandoverAlreadyComplete && rep.Status != v1alpha1.HandoverCompleted {
		rep.Warnings = append(rep.Warnings, opts.NoControllerWarning)
	}
	return rep, err
}

// FailureMessage is the one line that says why a handover of object
// failed: a handover error with the pasteable command that makes it
// possible (with the user's connection flags), or the API's error.
func FailureMessage(err error, object string, opts Options) string {
	var herr *Error
	switch {
	case errors.As(err, &herr) && herr.Fix != nil:
		return err.Error() + ": " + shell.Join(withCommandFlags(herr.Fix, opts.CommandFlags))
	case !IsError(err):
		if opts.Friendly != nil {
			err = opts.Friendly(err)
		}
		return fmt.Sprintf("%s: %v", object, err)
	}
	return err.Error()
}

// withCommandFlags puts the user's connection flags into a suggested
// kubectl command, right after "kubectl VERB".
func withCommandFlags(words, flags []string) []string {
	if len(words) < 2 || len(flags) == 0 {
		return words
	}
	out := append([]string{}, words[:2]...)
	out = append(out, flags...)
	return append(out, words[2:]...)
}

func run(ctx context.Context, c dynamic.ResourceInterface, name string, req Request, opts Options) (*v1alpha1.HandoverReport, error) {
	req, opts = withDefaults(req, opts)
	live, err := c.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	plan, err := Plan(live, req, opts.Now())
	if err != nil {
		return nil, err
	}
	// Only an applier has manifests to drop the fields from.
	fromApplies := false
	for _, e := range live.GetManagedFields() {
		fromApplies = fromApplies || (e.Manager == req.From && e.Operation == metav1.ManagedFieldsOperationApply)
	}
	// Later plans work on the same fields, even once --all's manager is gone.
	fields := plan.Fields
	req.Fields, req.resume = fields, true
	report := plan
	if plan.Status == v1alpha1.HandoverAlreadyComplete {
		report.After = States(live, fields)
		return report, nil
	}
	switch opts.DryRun {
	case v1alpha1.DryRunClient:
		for i := range report.Steps {
			report.Steps[i].Status = v1alpha1.StepDryRun
		}
		report.Status = v1alpha1.HandoverPlanned
		report.Message = "client dry run: nothing was sent"
		return report, nil
	case v1alpha1.DryRunServer:
		return dryRunServer(ctx, c, name, live, req, report, opts)
	}
	done, live, err := writeSteps(ctx, c, name, live, plan, req, opts)
	report = withSteps(report, done)
	if err != nil {
		return report, err
	}
	report.Status = v1alpha1.HandoverCompleted
	if err := controllerStatus(ctx, c, name, live, req, opts, report); err != nil {
		return report, err
	}
	if report.Mode != v1alpha1.HandoverRelease && (report.Status == v1alpha1.HandoverCompleted || report.Status == v1alpha1.HandoverHeld || report.Status == v1alpha1.HandoverHandedOver) {
		switch {
		case fromApplies:
			report.Next = fmt.Sprintf("remove %s from the manifests %q applies: its next apply no longer touches them", strings.Join(pathStrings(fields), ", "), req.From)
		case editedLastApplied(done):
			report.Next = fmt.Sprintf("remove %s from the manifests you apply client-side: their last-applied annotation no longer holds them, so kubectl apply leaves them as they are", strings.Join(pathStrings(fields), ", "))
		}
	}
	if live, err = c.Get(ctx, name, metav1.GetOptions{}); err == nil {
		report.After = States(live, fields)
	}
	return report, nil
}

// withDefaults fills in what the caller left unset.
func withDefaults(req Request, opts Options) (Request, Options) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Poll == 0 {
		opts.Poll = time.Second
	}
	if opts.Backoff == nil {
		b := write.DefaultBackoff
		opts.Backoff = &b
	}
	if opts.Manager == "" {
		opts.Manager = "kubectl-ssa"
	}
	if req.TempManager == "" {
		req.TempManager = DefaultTempManager
	}
	return req, opts
}

// writeSteps writes the plan's steps one by one, each planned again from
// the object as the last write left it (and read again after a 409),
// until no step is left or the next is to wait for the controller. It
// returns the steps done (a failed one last) and the object after them.
func writeSteps(ctx context.Context, c dynamic.ResourceInterface, name string, live *unstructured.Unstructured, plan *v1alpha1.HandoverReport, req Request, opts Options) ([]v1alpha1.HandoverStep, *unstructured.Unstructured, error) {
	// A signal stops a run before its first write, or once its writes
	// are done (a write in flight is never cut off, whether or not the
	// server has stored it yet): never between a share and its release.
	finishing, stop := write.Finishing(ctx, write.FinishGrace)
	defer stop()
	fields := req.Fields
	var done []v1alpha1.HandoverStep
	for n := 0; ; n++ {
		if n > maxSteps {
			return done, live, fmt.Errorf("still planning steps after %d writes: stopping (please report this)", maxSteps)
		}
		if err := ctx.Err(); err != nil && len(done) == 0 {
			return done, live, err
		}
		var step *v1alpha1.HandoverStep
		err := write.RetryOnConflict(finishing, *opts.Backoff, func(ctx context.Context, attempt int) error {
			if attempt > 0 || len(done) > 0 {
				var err error
				if live, err = c.Get(ctx, name, metav1.GetOptions{}); err != nil {
					return err
				}
				if plan, err = Plan(live, req, opts.Now()); err != nil {
					return err
				}
			}
			if len(plan.Steps) == 0 || plan.Steps[0].Name == v1alpha1.StepWait {
				return nil
			}
			s := plan.Steps[0]
			out, err := writeStep(ctx, c, live, s, opts, v1alpha1.DryRunNone)
			if apierrors.IsConflict(err) {
				return err // someone wrote in between: read again, plan again
			}
			if err == nil {
				err = unchanged(live, out, fields, s.LastApplied, opts.ShowSecretValues)
			}
			if err != nil {
				s.Status = v1alpha1.StepFailed
				done = append(done, s)
				return fmt.Errorf("step %q: %w", s.Name, err)
			}
			s.Status, s.ResourceVersion, s.ManagedFields = v1alpha1.StepDone, out.GetResourceVersion(), out.GetManagedFields()
			step, live = &s, out
			return nil
		})
		if err != nil {
			return done, live, err
		}
		if step == nil {
			return done, live, nil
		}
		done = append(done, *step)
		if opts.Progress != nil {
			opts.Progress(*step)
		}
	}
}

// controllerStatus says, for a handover to a controller whose steps are
// written, whether the controller has the fields, or they are held for it
// (waiting for it first with --wait), or handed over (held, but nothing
// can reset them).
func controllerStatus(ctx context.Context, c dynamic.ResourceInterface, name string, live *unstructured.Unstructured, req Request, opts Options, report *v1alpha1.HandoverReport) error {
	if report.Mode != v1alpha1.HandoverController {
		return nil
	}
	fields := req.Fields
	if req.Wait {
		ok, err := waitAndCleanup(ctx, c, name, req, fields, opts, report)
		if err != nil {
			return err
		}
		if !ok {
			report.Status = v1alpha1.HandoverHeld
		}
	} else if step, owned, err := Cleanup(live, req, fields); err == nil && owned && step == nil {
		// The controller owns them already and nothing holds them.
		report.Message = fmt.Sprintf("%q owns the fields", req.To)
	} else {
		report.Status = v1alpha1.HandoverHeld
		report.Message = fmt.Sprintf("%q holds the fields at their values until %q writes them (a controller writes only when the value must change: an HPA already at its target may never; holding is harmless)", req.TempManager, req.To)
	}
	if report.Status == v1alpha1.HandoverHeld && opts.ControllerTargets {
		if now, err := c.Get(ctx, name, metav1.GetOptions{}); err == nil && safe(now, req, fields) {
			report.Status = v1alpha1.HandoverHandedOver
			report.Message = fmt.Sprintf("done: no applier owns the fields and no last-applied annotation holds them, so nothing resets them; %q takes them when it next changes them (it writes only when the value must change), and %q, which holds them at their values until then, lets go when this command runs again", req.To, req.TempManager)
		}
	}
	return nil
}

// dryRunServer sends every step of the plan as a server dry run. Each
// carries the resourceVersion the plan was made from, so a writer that
// changed the object in between (a controller writing status, say) makes
// the server answer 409: read the object again, plan again and send the
// whole plan again, as a real run does before each of its writes.
func dryRunServer(ctx context.Context, c dynamic.ResourceInterface, name string, live *unstructured.Unstructured, req Request, report *v1alpha1.HandoverReport, opts Options) (*v1alpha1.HandoverReport, error) {
	err := write.RetryOnConflict(ctx, *opts.Backoff, func(ctx context.Context, attempt int) error {
		if attempt > 0 {
			var err error
			if live, err = c.Get(ctx, name, metav1.GetOptions{}); err != nil {
				return err
			}
			plan, err := Plan(live, req, opts.Now())
			if err != nil {
				return err
			}
			if report = plan; plan.Status == v1alpha1.HandoverAlreadyComplete {
				report.After = States(live, report.Fields)
				return nil
			}
		}
		for i := range report.Steps {
			s := &report.Steps[i]
			if s.Name == v1alpha1.StepWait {
				s.Status = v1alpha1.StepSkipped
				continue
			}
			if _, err := writeStep(ctx, c, live, *s, opts, v1alpha1.DryRunServer); err != nil {
				s.Status = v1alpha1.StepFailed
				if apierrors.IsConflict(err) {
					return err
				}
				return fmt.Errorf("server dry run of step %q: %w", s.Name, err)
			}
			s.Status = v1alpha1.StepDryRun
		}
		return nil
	})
	if err != nil || report.Status == v1alpha1.HandoverAlreadyComplete {
		return report, err
	}
	report.Status = v1alpha1.HandoverPlanned
	report.Message = "server dry run: every step was accepted by the server, nothing was stored"
	return report, nil
}

func waitAndCleanup(ctx context.Context, c dynamic.ResourceInterface, name string, req Request, fields []fieldpath.Path, opts Options, report *v1alpha1.HandoverReport) (bool, error) {
	deadline := opts.Now().Add(opts.Timeout)
	waitStep := v1alpha1.HandoverStep{Name: v1alpha1.StepWait, Manager: req.To, Paths: pathlang.Paths(fields), Description: fmt.Sprintf("wait until %q writes the fields", req.To)}
	for {
		live, err := c.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		_, owned, err := Cleanup(live, req, fields)
		if err != nil {
			return false, err
		}
		if owned {
			waitStep.Status = v1alpha1.StepDone
			report.Steps = append(report.Steps, waitStep)
			if opts.Progress != nil {
				opts.Progress(waitStep)
			}
			report.Message = fmt.Sprintf("%q owns the fields", req.To)
			return true, cleanup(ctx, c, name, live, req, fields, opts, report)
		}
		if !opts.Now().Before(deadline) {
			waitStep.Status = v1alpha1.StepTimedOut
			report.Steps = append(report.Steps, waitStep)
			vals := States(live, fields)
			if !opts.ShowSecretValues {
				redactStates(report.Object, vals)
			}
			report.Message = fmt.Sprintf("%q has not written the fields within %s; %q holds them at their current values (%s), so nothing resets them. Run the same command again to finish", req.To, opts.Timeout, req.TempManager, valueList(vals))
			return false, nil
		}
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-time.After(opts.Poll):
		}
	}
}

// cleanup drops the temporary manager once the controller owns the fields.
func cleanup(ctx context.Context, c dynamic.ResourceInterface, name string, live *unstructured.Unstructured, req Request, fields []fieldpath.Path, opts Options, report *v1alpha1.HandoverReport) error {
	return write.RetryOnConflict(ctx, *opts.Backoff, func(ctx context.Context, attempt int) error {
		if attempt > 0 {
			var err error
			if live, err = c.Get(ctx, name, metav1.GetOptions{}); err != nil {
				return err
			}
		}
		step, _, err := Cleanup(live, req, fields)
		if err != nil || step == nil {
			return err
		}
		out, err := writeStep(ctx, c, live, *step, opts, v1alpha1.DryRunNone)
		if apierrors.IsConflict(err) {
			return err
		}
		if err != nil {
			return fmt.Errorf("step %q: %w", step.Name, err)
		}
		step.Status, step.ResourceVersion, step.ManagedFields = v1alpha1.StepDone, out.GetResourceVersion(), out.GetManagedFields()
		report.Steps = append(report.Steps, *step)
		if opts.Progress != nil {
			opts.Progress(*step)
		}
		return nil
	})
}

func valueList(vals []v1alpha1.FieldState) string {
	s := ""
	for i, v := range vals {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%s=%v", v.Path, v.Value)
	}
	return s
}

// safe tells whether nothing but the controller can change the fields of
// a handover: no Apply manager but the temporary one owns them (an
// applier's next apply would), and no last-applied annotation holds them
// (kubectl's next client-side apply would).
func safe(live *unstructured.Unstructured, req Request, fields []fieldpath.Path) bool {
	var lastApplied map[string]any
	if ann, ok := live.GetAnnotations()[ownership.LastAppliedAnnotation]; ok {
		if json.Unmarshal([]byte(ann), &lastApplied) != nil {
			return false
		}
	}
	for _, p := range fields {
		owners, err := ownership.Owners(live.GetManagedFields(), p)
		if err != nil {
			return false
		}
		for _, o := range owners {
			if o.Operation == metav1.ManagedFieldsOperationApply && o.Manager != req.TempManager {
				return false
			}
		}
		if _, held := pathlang.Lookup(lastApplied, p); held && lastApplied != nil {
			return false
		}
	}
	return true
}

// writeStep sends one step: the hold step is a real server-side apply by the
// temporary manager, the others rewrite managedFields only. Both carry the
// resourceVersion the step was planned from.
func writeStep(ctx context.Context, c dynamic.ResourceInterface, live *unstructured.Unstructured, s v1alpha1.HandoverStep, opts Options, dryRun v1alpha1.DryRun) (*unstructured.Unstructured, error) {
	if s.Name == v1alpha1.StepHold {
		cfg := &unstructured.Unstructured{Object: s.Apply}
		cfg.SetResourceVersion(live.GetResourceVersion())
		ao := metav1.ApplyOptions{FieldManager: s.Manager}
		if dryRun == v1alpha1.DryRunServer {
			ao.DryRun = []string{metav1.DryRunAll}
		}
		return c.Apply(ctx, live.GetName(), cfg, ao)
	}
	var ops []write.PatchOp
	if s.Name != v1alpha1.StepLastApplied {
		ops = write.ManagedFieldsOps(s.ManagedFields)
	}
	manager := opts.Manager
	if s.LastApplied != nil {
		ops = append(ops, lastAppliedOps(s.LastApplied)...)
		// The apiserver gives a changed field to the writer: written as
		// its owner, the annotation stays where it was.
		manager = s.LastApplied.Manager
	}
	return write.Patch(ctx, c, live.GetName(), live.GetResourceVersion(), ops, write.Options{DryRun: dryRun, FieldManager: manager})
}

// unchanged checks that a write changed no value of the fields (but the
// annotation an edit removes).
func unchanged(before, after *unstructured.Unstructured, fields []fieldpath.Path, edit *v1alpha1.LastAppliedEdit, showSecrets bool) error {
	for _, p := range fields {
		if edit != nil && p.Equals(lastAppliedPath) {
			continue
		}
		a, _ := pathlang.Lookup(before.Object, p)
		b, _ := pathlang.Lookup(after.Object, p)
		if edit != nil {
			a, b = withoutLastApplied(p, a), withoutLastApplied(p, b)
		}
		if !reflect.DeepEqual(a, b) {
			if !showSecrets && ownership.IsSecret(before.GetAPIVersion(), before.GetKind()) {
				a, b = ownership.RedactValue(p, a), ownership.RedactValue(p, b)
			}
			return fmt.Errorf("%s changed from %v to %v: stopping (please report this)", p, a, b)
		}
	}
	return nil
}

// withoutLastApplied is v, the value at p, without the last-applied
// annotation when p holds it (.metadata, .metadata.annotations): an edit
// changes it, and the apiserver drops an annotations map it leaves empty.
func withoutLastApplied(p fieldpath.Path, v any) any {
	m, ok := v.(map[string]any)
	if !ok || len(p) >= len(lastAppliedPath) || !lastAppliedPath[:len(p)].Equals(p) {
		return v
	}
	key := lastAppliedPath[len(p)].FieldName
	c := make(map[string]any, len(m))
	for k, x := range m {
		c[k] = x
	}
	if len(p)+1 == len(lastAppliedPath) {
		delete(c, *key)
	} else if child := withoutLastApplied(lastAppliedPath[:len(p)+1], c[*key]); child != nil {
		c[*key] = child
	} else {
		delete(c, *key)
	}
	if len(c) == 0 {
		return nil
	}
	return c
}

func editedLastApplied(steps []v1alpha1.HandoverStep) bool {
	for _, s := range steps {
		if s.LastApplied != nil && s.Status == v1alpha1.StepDone {
			return true
		}
	}
	return false
}

func withSteps(r *v1alpha1.HandoverReport, done []v1alpha1.HandoverStep) *v1alpha1.HandoverReport {
	r.Steps = done
	if r.Steps == nil {
		r.Steps = []v1alpha1.HandoverStep{}
	}
	return r
}
