package migrate

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/write"
)

// Resource is a kind and where it is served.
type Resource struct {
	GVR        schema.GroupVersionResource
	Kind       string
	Namespaced bool
}

// Item is one object to migrate, as listed: its metadata (managedFields
// and annotations included) is all a migration rewrites.
type Item struct {
	Resource Resource
	Meta     *metav1.PartialObjectMetadata
}

// Source lists the objects of a run, calling yield for each; it should
// list in chunks so that memory stays flat however many objects there are.
type Source func(ctx context.Context, yield func(Item) error) error

// RunOptions configure Run.
type RunOptions struct {
	Plan        Options
	DryRun      v1alpha1.DryRun
	Concurrency int
	BackupDir   string
	// Check only reports findings and what would change; nothing is
	// written and no backup is made.
	Check bool
	// Verify re-reads each migrated object and checks that no value
	// changed; VerifyApply, when set, checks that applying the
	// last-applied configuration as the target conflicts with nothing
	// and removes nothing.
	Verify      bool
	VerifyApply func(ctx context.Context, obj *unstructured.Unstructured) error
	// Backoff paces the re-reads after a 409 (default write.DefaultBackoff).
	Backoff *wait.Backoff
	// Progress is called after each object, from any goroutine but one
	// call at a time, with counts that only grow.
	Progress func(v1alpha1.MigrationSummary)
	// KeepAll keeps unchanged objects in the report (otherwise only
	// their count).
	KeepAll bool
	Manager string
}

// Clients are the API clients Run uses.
type Clients struct {
	Metadata metadata.Interface
	Dynamic  dynamic.Interface
}

// MaxConcurrency is the most objects Run migrates at once.
const MaxConcurrency = 256

// Run migrates every object src yields, with bounded concurrency.
func Run(ctx context.Context, c Clients, src Source, opts RunOptions) (*v1alpha1.MigrationReport, error) {
	if opts.Concurrency <= 0 {
		opts.Concurrency = 8
	}
	opts.Concurrency = min(opts.Concurrency, MaxConcurrency)
	if opts.Backoff == nil {
		b := write.DefaultBackoff
		opts.Backoff = &b
	}
	if opts.Manager == "" {
		opts.Manager = "kubectl-ssa"
	}
	rep := &v1alpha1.MigrationReport{TypeMeta: v1alpha1.NewTypeMeta(v1alpha1.MigrationReportKind), Mode: opts.Plan.Mode, FieldManager: opts.Plan.Target, DryRun: opts.DryRun, BackupDir: opts.BackupDir, Objects: []v1alpha1.ObjectResult{}, Unlisted: []string{}}
	if opts.Check {
		rep.BackupDir, rep.Check = "", true
	}
	// The first backup that cannot be written (a full disk, an earlier
	// run's backup of the object) stops the run: no other object starts.
	runCtx, stopRun := context.WithCancelCause(ctx)
	defer stopRun(nil)
	items := make(chan Item, opts.Concurrency*2)
	var mu sync.Mutex
	// The workers return no error: an object's failure is in its
	// result, and does not stop the others.
	var workers errgroup.Group
	// A worker is started with each object until there are
	// opts.Concurrency: never more workers than objects.
	started := 0
	startWorker := func() {
		workers.Go(func() error {
			for it := range items {
				if runCtx.Err() != nil {
					// Stopped: what is queued is not started.
					continue
				}
				res, started := migrateOne(ctx, c, it, opts)
				if !started {
					continue
				}
				if strings.HasPrefix(res.Reason, backupFailure) {
					stopRun(errBackupStopped)
				}
				mu.Lock()
				rep.Summary.Scanned++
				switch res.Result {
				case v1alpha1.ResultMigrated, v1alpha1.ResultWouldMigrate, v1alpha1.ResultNeedsWork:
					rep.Summary.Migrated++
				case v1alpha1.ResultUnchanged:
					rep.Summary.Unchanged++
				case v1alpha1.ResultSkipped:
					rep.Summary.Skipped++
				case v1alpha1.ResultFailed:
					rep.Summary.Failed++
				}
				if res.Result != v1alpha1.ResultUnchanged || opts.KeepAll || len(res.Findings) > 0 {
					rep.Objects = append(rep.Objects, res)
				}
				// Under the lock: called after it, a worker holding an
				// older count could report it after a newer one, and the
				// counter went backwards.
				if opts.Progress != nil {
					opts.Progress(rep.Summary)
				}
				mu.Unlock()
			}
			return nil
		})
	}
	srcErr := src(ctx, func(it Item) error {
		if started < opts.Concurrency {
			started++
			startWorker()
		}
		select {
		case items <- it:
			return nil
		case <-runCtx.Done():
			return runCtx.Err()
		}
	})
	close(items)
	_ = workers.Wait()
	sort.Slice(rep.Objects, func(i, j int) bool { return refKey(rep.Objects[i].Object) < refKey(rep.Objects[j].Object) })
	if err := ctx.Err(); err != nil {
		// Stopped (a signal): the objects begun were finished, and the
		// report holds them; the cancellation, not their errors, is
		// the answer.
		return rep, err
	}
	if cause := context.Cause(runCtx); errors.Is(cause, errBackupStopped) {
		return rep, cause
	}
	return rep, srcErr
}

// backupFailure begins the reason of an object whose backup could not be
// written (nothing was changed).
const backupFailure = "writing the backup: "

var errBackupStopped = errors.New("a backup could not be written (see the failed object): migrate stopped there, and the objects not yet started were not migrated; fix the cause and run the same command again")

func refKey(r v1alpha1.ObjectRef) string {
	return r.APIVersion + "/" + r.Kind + "/" + r.Namespace + "/" + r.Name
}

func refOf(it Item, m *metav1.PartialObjectMetadata) v1alpha1.ObjectRef {
	return v1alpha1.ObjectRef{
		APIVersion: it.Resource.GVR.GroupVersion().String(), Kind: it.Resource.Kind,
		Namespace: m.Namespace, Name: m.Name, UID: string(m.UID), ResourceVersion: m.ResourceVersion,
	}
}

func (c Clients) metaClient(it Item) metadata.ResourceInterface {
	if it.Resource.Namespaced {
		return c.Metadata.Resource(it.Resource.GVR).Namespace(it.Meta.Namespace)
	}
	return c.Metadata.Resource(it.Resource.GVR)
}

func (c Clients) dynClient(it Item) dynamic.ResourceInterface {
	if it.Resource.Namespaced {
		return c.Dynamic.Resource(it.Resource.GVR).Namespace(it.Meta.Namespace)
	}
	return c.Dynamic.Resource(it.Resource.GVR)
}

// migrateOne migrates one object; started is false when ctx was cancelled
// before anything was written (the object is then not part of the run).
// Once its first write begins (the backup, or the patch without one), the
// rest (the patch, the verification) goes on past a cancellation
// (write.Finishing): a signal never leaves a backup without its write,
// nor a write cut off without knowing whether the server stored it.
func migrateOne(ctx context.Context, c Clients, it Item, opts RunOptions) (res v1alpha1.ObjectResult, started bool) {
	finishing, stop := write.Finishing(ctx, write.FinishGrace)
	defer stop()
	m := &one{c: c, it: it, opts: opts, meta: it.Meta,
		res: v1alpha1.ObjectResult{Object: refOf(it, it.Meta), Changes: []v1alpha1.MigrationChange{}, Findings: []string{}}}
	err := write.RetryOnConflict(finishing, *opts.Backoff, func(fctx context.Context, attempt int) error {
		return m.try(ctx, fctx, attempt)
	})
	return m.result(ctx, finishing, err)
}

// one is the migration of one object, across the tries after 409s.
type one struct {
	c       Clients
	it      Item
	opts    RunOptions
	meta    *metav1.PartialObjectMetadata
	res     v1alpha1.ObjectResult
	full    *unstructured.Unstructured
	plan    *Plan
	written *metav1.PartialObjectMetadata
	// writing: the first write has begun.
	writing bool
}

var (
	// errDone ends the tries with the result already in res.
	errDone = errors.New("done")
	// errNotStarted ends the tries of a stopped run before any write.
	errNotStarted = errors.New("not started")
)

// try reads the object (with ctx until the first write, fctx after),
// plans, and writes with fctx.
func (m *one) try(ctx, fctx context.Context, attempt int) error {
	rctx := ctx
	if m.writing {
		rctx = fctx
	}
	p, err := m.read(rctx, attempt)
	if err != nil {
		return err
	}
	m.plan = p
	m.res.Object = refOf(m.it, m.meta)
	m.res.Findings, m.res.Changes = p.Findings, p.Changes
	opts := m.opts
	switch {
	case p.Action == ActionNone:
		m.res.Result = v1alpha1.ResultUnchanged
		return errDone
	case p.Action == ActionSkip:
		m.res.Result, m.res.Reason = v1alpha1.ResultSkipped, p.Reason
		return errDone
	case opts.Check:
		m.res.Result = v1alpha1.ResultNeedsWork
		return errDone
	case opts.DryRun == v1alpha1.DryRunClient:
		m.res.Result, m.res.Before, m.res.After = v1alpha1.ResultWouldMigrate, p.Before, p.After
		return errDone
	}
	if !m.writing && ctx.Err() != nil {
		return errNotStarted
	}
	m.writing = true
	if opts.DryRun == v1alpha1.DryRunNone && opts.BackupDir != "" && m.res.Backup == "" {
		if m.res.Backup, err = writeBackup(opts.BackupDir, m.it, m.meta, p); err != nil {
			m.res.Result, m.res.Reason = v1alpha1.ResultFailed, fmt.Sprintf("%s%v (nothing was changed)", backupFailure, err)
			return errDone
		}
	}
	ops := write.ManagedFieldsOps(p.After)
	if p.RemoveLastApplied {
		ops = append(ops, write.RemoveAnnotationOp(ownership.LastAppliedAnnotation))
	}
	m.written, err = write.Patch[*metav1.PartialObjectMetadata](fctx, m.c.metaClient(m.it), m.meta.Name, m.meta.ResourceVersion, ops,
		write.Options{DryRun: opts.DryRun, FieldManager: opts.Manager})
	return err
}

// read reads the object as the plan needs it and plans.
func (m *one) read(ctx context.Context, attempt int) (*Plan, error) {
	c, it, opts := m.c, m.it, m.opts
	m.full = nil
	if attempt > 0 {
		// Someone wrote in between: read it again and plan again.
		meta, err := c.metaClient(it).Get(ctx, m.meta.Name, metav1.GetOptions{})
		if err != nil {
			return nil, fmt.Errorf("reading it again after a conflict: %w", err)
		}
		m.meta = meta
	}
	if opts.Verify && opts.DryRun == v1alpha1.DryRunNone && !opts.Check {
		// Plan from the very object --verify compares with: the
		// write's resourceVersion precondition then proves nothing
		// changed in between.
		var err error
		if m.full, err = c.dynClient(it).Get(ctx, m.meta.Name, metav1.GetOptions{}); err != nil {
			return nil, fmt.Errorf("reading it: %w", err)
		}
		var om metav1.ObjectMeta
		if md, ok := m.full.Object["metadata"].(map[string]any); ok {
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(md, &om); err != nil {
				return nil, fmt.Errorf("reading its metadata: %w", err)
			}
		}
		m.meta = &metav1.PartialObjectMetadata{TypeMeta: m.meta.TypeMeta, ObjectMeta: om}
	}
	obj := Object{Ref: refOf(it, m.meta), ManagedFields: m.meta.ManagedFields, Annotations: m.meta.Annotations, OwnerReferences: m.meta.OwnerReferences}
	if m.full != nil {
		obj.Content = m.full.Object
	}
	p, err := MakePlan(obj, opts.Plan)
	if err != nil || !p.NeedContent {
		return p, err
	}
	if m.full == nil {
		if m.full, err = c.dynClient(it).Get(ctx, m.meta.Name, metav1.GetOptions{}); err != nil {
			return nil, fmt.Errorf("reading it: %w", err)
		}
	}
	obj.Content = m.full.Object
	return MakePlan(obj, opts.Plan)
}

// result is the object's result after its tries ended with err; started
// is false when a stopped run had written nothing of it.
func (m *one) result(ctx, fctx context.Context, err error) (v1alpha1.ObjectResult, bool) {
	res := m.res
	switch {
	case errors.Is(err, errDone):
		return res, true
	case errors.Is(err, errNotStarted), !m.writing && ctx.Err() != nil && errors.Is(err, context.Canceled):
		return res, false
	case apierrors.IsNotFound(err):
		res.Result, res.Reason = v1alpha1.ResultSkipped, "deleted during the run"
		return res, true
	case apierrors.IsForbidden(err):
		res.Result, res.Reason = v1alpha1.ResultFailed, "forbidden: "+write.APIMessage(err)
		return res, true
	case err != nil:
		res.Result, res.Reason = v1alpha1.ResultFailed, write.APIMessage(err)
		return res, true
	}
	if m.opts.DryRun == v1alpha1.DryRunServer {
		res.Result = v1alpha1.ResultWouldMigrate
		return res, true
	}
	res.Result = v1alpha1.ResultMigrated
	if m.opts.Verify {
		err := verify(fctx, m.c, m.it, m.full, m.written, m.plan, m.opts)
		var note *VerifyNote
		switch {
		case errors.As(err, &note):
			res.Reason = "verified; note: " + note.Msg
		case err != nil:
			res.Result, res.Reason = v1alpha1.ResultFailed, fmt.Sprintf("migrated, but the verification failed: %v", err)
		default:
			res.Reason = "verified"
		}
	}
	return res, true
}
