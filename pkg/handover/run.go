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
	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/pathlang"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/write"
)

// maxSteps bounds the writes of one run: a plan has at most four, and a
// step that did not do what it planned must not be sent again and again.
const maxSteps = 10

// Options tune Run.
type Options struct {
	DryRun write.DryRun
	// Timeout bounds the wait for the controller.
	Timeout time.Duration
	// Poll is the interval of the wait (default 1s).
	Poll time.Duration
	// Backoff paces the re-reads after 409 Conflict (default
	// write.DefaultBackoff).
	Backoff *wait.Backoff
	Now     func() time.Time
	// Progress is told about each step as it finishes.
	Progress func(Step)
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
func Run(ctx context.Context, c dynamic.ResourceInterface, name string, req Request, opts Options) (*Report, error) {
	rep, err := run(ctx, c, name, req, opts)
	if rep == nil {
		return nil, err
	}
	if err != nil {
		rep.Status = StatusFailed
		rep.Message = FailureMessage(err, ownership.ObjectName(rep.Object.Kind, rep.Object.Namespace, rep.Object.Name), opts)
	}
	if !opts.ShowSecretValues {
		RedactSecrets(rep)
	}
	if opts.NoControllerWarning != "" && rep.Mode == ModeController && rep.Status != StatusAlreadyComplete && rep.Status != StatusCompleted {
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

func run(ctx context.Context, c dynamic.ResourceInterface, name string, req Request, opts Options) (*Report, error) {
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
	if plan.Status == StatusAlreadyComplete {
		report.After = States(live, fields)
		return report, nil
	}
	switch opts.DryRun {
	case write.DryRunClient:
		for i := range report.Steps {
			report.Steps[i].Status = StepDryRun
		}
		report.Status = StatusPlanned
		report.Message = "client dry run: nothing was sent"
		return report, nil
	case write.DryRunServer:
		return dryRunServer(ctx, c, name, live, req, report, opts)
	}

	// A signal stops a run before its first write, or once its writes
	// are done (a write in flight is never cut off, whether or not the
	// server has stored it yet): never between a share and its release.
	finishing, stop := write.Finishing(ctx, write.FinishGrace)
	defer stop()
	var done []Step
	for n := 0; ; n++ {
		if n > maxSteps {
			return withSteps(report, done), fmt.Errorf("still planning steps after %d writes: stopping (please report this)", maxSteps)
		}
		if err := ctx.Err(); err != nil && len(done) == 0 {
			return withSteps(report, done), err
		}
		var step *Step
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
			if len(plan.Steps) == 0 || plan.Steps[0].Name == StepWait {
				return nil
			}
			s := plan.Steps[0]
			out, err := writeStep(ctx, c, live, s, opts, write.DryRunNone)
			if apierrors.IsConflict(err) {
				return err // someone wrote in between: read again, plan again
			}
			if err == nil {
				err = unchanged(live, out, fields, s.LastApplied, opts.ShowSecretValues)
			}
			if err != nil {
				s.Status = StepFailed
				done = append(done, s)
				return fmt.Errorf("step %q: %w", s.Name, err)
			}
			s.Status, s.ResourceVersion, s.ManagedFields = StepDone, out.GetResourceVersion(), out.GetManagedFields()
			step, live = &s, out
			return nil
		})
		if err != nil {
			return withSteps(report, done), err
		}
		if step == nil {
			break
		}
		done = append(done, *step)
		if opts.Progress != nil {
			opts.Progress(*step)
		}
	}
	report = withSteps(report, done)
	report.Status = StatusCompleted

	if report.Mode == ModeController {
		if req.Wait {
			ok, err := waitAndCleanup(ctx, c, name, req, fields, opts, report)
			if err != nil {
				return report, err
			}
			if !ok {
				report.Status = StatusHeld
			}
		} else if step, owned, err := Cleanup(live, req, fields); err == nil && owned && step == nil {
			// The controller owns them already and nothing holds them.
			report.Message = fmt.Sprintf("%q owns the fields", req.To)
		} else {
			report.Status = StatusHeld
			report.Message = fmt.Sprintf("%q holds the fields at their values until %q writes them (a controller writes only when the value must change: an HPA already at its target may never; holding is harmless)", req.TempManager, req.To)
		}
	}
	if report.Status == StatusHeld && opts.ControllerTargets {
		if now, err := c.Get(ctx, name, metav1.GetOptions{}); err == nil && safe(now, req, fields) {
			report.Status = StatusHandedOver
			report.Message = fmt.Sprintf("done: no applier owns the fields and no last-applied annotation holds them, so nothing resets them; %q takes them when it next changes them (it writes only when the value must change), and %q, which holds them at their values until then, lets go when this command runs again", req.To, req.TempManager)
		}
	}
	if report.Mode != ModeRelease && (report.Status == StatusCompleted || report.Status == StatusHeld || report.Status == StatusHandedOver) {
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

// dryRunServer sends every step of the plan as a server dry run. Each
// carries the resourceVersion the plan was made from, so a writer that
// changed the object in between (a controller writing status, say) makes
// the server answer 409: read the object again, plan again and send the
// whole plan again, as a real run does before each of its writes.
func dryRunServer(ctx context.Context, c dynamic.ResourceInterface, name string, live *unstructured.Unstructured, req Request, report *Report, opts Options) (*Report, error) {
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
			if report = plan; plan.Status == StatusAlreadyComplete {
				report.After = States(live, report.Fields)
				return nil
			}
		}
		for i := range report.Steps {
			s := &report.Steps[i]
			if s.Name == StepWait {
				s.Status = StepSkipped
				continue
			}
			if _, err := writeStep(ctx, c, live, *s, opts, write.DryRunServer); err != nil {
				s.Status = StepFailed
				if apierrors.IsConflict(err) {
					return err
				}
				return fmt.Errorf("server dry run of step %q: %w", s.Name, err)
			}
			s.Status = StepDryRun
		}
		return nil
	})
	if err != nil || report.Status == StatusAlreadyComplete {
		return report, err
	}
	report.Status = StatusPlanned
	report.Message = "server dry run: every step was accepted by the server, nothing was stored"
	return report, nil
}

func waitAndCleanup(ctx context.Context, c dynamic.ResourceInterface, name string, req Request, fields []fieldpath.Path, opts Options, report *Report) (bool, error) {
	deadline := opts.Now().Add(opts.Timeout)
	waitStep := Step{Name: StepWait, Manager: req.To, Paths: pathlang.Paths(fields), Description: fmt.Sprintf("wait until %q writes the fields", req.To)}
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
			waitStep.Status = StepDone
			report.Steps = append(report.Steps, waitStep)
			if opts.Progress != nil {
				opts.Progress(waitStep)
			}
			report.Message = fmt.Sprintf("%q owns the fields", req.To)
			return true, cleanup(ctx, c, name, live, req, fields, opts, report)
		}
		if !opts.Now().Before(deadline) {
			waitStep.Status = StepTimedOut
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
func cleanup(ctx context.Context, c dynamic.ResourceInterface, name string, live *unstructured.Unstructured, req Request, fields []fieldpath.Path, opts Options, report *Report) error {
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
		out, err := writeStep(ctx, c, live, *step, opts, write.DryRunNone)
		if apierrors.IsConflict(err) {
			return err
		}
		if err != nil {
			return fmt.Errorf("step %q: %w", step.Name, err)
		}
		step.Status, step.ResourceVersion, step.ManagedFields = StepDone, out.GetResourceVersion(), out.GetManagedFields()
		report.Steps = append(report.Steps, *step)
		if opts.Progress != nil {
			opts.Progress(*step)
		}
		return nil
	})
}

func valueList(vals []FieldState) string {
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
	var lastApplied map[string]interface{}
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
func writeStep(ctx context.Context, c dynamic.ResourceInterface, live *unstructured.Unstructured, s Step, opts Options, dryRun write.DryRun) (*unstructured.Unstructured, error) {
	if s.Name == StepHold {
		cfg := &unstructured.Unstructured{Object: s.Apply}
		cfg.SetResourceVersion(live.GetResourceVersion())
		ao := metav1.ApplyOptions{FieldManager: s.Manager}
		if dryRun == write.DryRunServer {
			ao.DryRun = []string{metav1.DryRunAll}
		}
		return c.Apply(ctx, live.GetName(), cfg, ao)
	}
	var ops []write.PatchOp
	if s.Name != StepLastApplied {
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
func unchanged(before, after *unstructured.Unstructured, fields []fieldpath.Path, edit *LastAppliedEdit, showSecrets bool) error {
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
func withoutLastApplied(p fieldpath.Path, v interface{}) interface{} {
	m, ok := v.(map[string]interface{})
	if !ok || len(p) >= len(lastAppliedPath) || !lastAppliedPath[:len(p)].Equals(p) {
		return v
	}
	key := lastAppliedPath[len(p)].FieldName
	c := make(map[string]interface{}, len(m))
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

func editedLastApplied(steps []Step) bool {
	for _, s := range steps {
		if s.LastApplied != nil && s.Status == StepDone {
			return true
		}
	}
	return false
}

func withSteps(r *Report, done []Step) *Report {
	r.Steps = done
	if r.Steps == nil {
		r.Steps = []Step{}
	}
	return r
}
