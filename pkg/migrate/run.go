package migrate

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"

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

// ReportKind is the kind of the migration report.
const ReportKind = v1alpha1.MigrationReportKind

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

// The types of the report, defined in package v1alpha1.
type (
	ObjectResult = v1alpha1.ObjectResult
	Summary      = v1alpha1.MigrationSummary
	Report       = v1alpha1.MigrationReport
	Result       = v1alpha1.MigrationResult
)

// The results.
const (
	ResultMigrated     = v1alpha1.ResultMigrated
	ResultWouldMigrate = v1alpha1.ResultWouldMigrate
	ResultUnchanged    = v1alpha1.ResultUnchanged
	ResultSkipped      = v1alpha1.ResultSkipped
	ResultFailed       = v1alpha1.ResultFailed
	ResultNeedsWork    = v1alpha1.ResultNeedsWork
)

// RunOptions configure Run.
type RunOptions struct {
	Plan        Options
	DryRun      write.DryRun
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
	Progress func(Summary)
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

// Run migrates every object src yields, with bounded concurrency.
func Run(ctx context.Context, c Clients, src Source, opts RunOptions) (*Report, error) {
	if opts.Concurrency <= 0 {
		opts.Concurrency = 8
	}
	if opts.Backoff == nil {
		b := write.DefaultBackoff
		opts.Backoff = &b
	}
	if opts.Manager == "" {
		opts.Manager = "kubectl-ssa"
	}
	rep := &Report{TypeMeta: v1alpha1.NewTypeMeta(ReportKind), Mode: opts.Plan.Mode, FieldManager: opts.Plan.Target, DryRun: opts.DryRun, BackupDir: opts.BackupDir, Objects: []ObjectResult{}, Unlisted: []string{}}
	if opts.Check {
		rep.BackupDir, rep.Check = "", true
	}
	items := make(chan Item, opts.Concurrency*2)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := 0; i < opts.Concurrency; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for it := range items {
				res := migrateOne(ctx, c, it, opts)
				mu.Lock()
				rep.Summary.Scanned++
				switch res.Result {
				case ResultMigrated, ResultWouldMigrate, ResultNeedsWork:
					rep.Summary.Migrated++
				case ResultUnchanged:
					rep.Summary.Unchanged++
				case ResultSkipped:
					rep.Summary.Skipped++
				case ResultFailed:
					rep.Summary.Failed++
				}
				if res.Result != ResultUnchanged || opts.KeepAll || len(res.Findings) > 0 {
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
		}()
	}
	srcErr := src(ctx, func(it Item) error {
		select {
		case items <- it:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})
	close(items)
	wg.Wait()
	sort.Slice(rep.Objects, func(i, j int) bool { return refKey(rep.Objects[i].Object) < refKey(rep.Objects[j].Object) })
	return rep, srcErr
}

func refKey(r ownership.ObjectRef) string {
	return r.APIVersion + "/" + r.Kind + "/" + r.Namespace + "/" + r.Name
}

func refOf(it Item, m *metav1.PartialObjectMetadata) ownership.ObjectRef {
	return ownership.ObjectRef{
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

func migrateOne(ctx context.Context, c Clients, it Item, opts RunOptions) ObjectResult {
	meta := it.Meta
	res := ObjectResult{Object: refOf(it, meta), Changes: []Change{}, Findings: []string{}}
	var full *unstructured.Unstructured
	var plan *Plan
	var written *metav1.PartialObjectMetadata
	// done ends the tries with the result already in res.
	done := errors.New("done")
	err := write.RetryOnConflict(ctx, *opts.Backoff, func(ctx context.Context, attempt int) error {
		full = nil
		if attempt > 0 {
			// Someone wrote in between: read it again and plan again.
			m, err := c.metaClient(it).Get(ctx, meta.Name, metav1.GetOptions{})
			if err != nil {
				return fmt.Errorf("reading it again after a conflict: %w", err)
			}
			meta = m
		}
		if opts.Verify && opts.DryRun == write.DryRunNone && !opts.Check {
			// Plan from the very object --verify compares with: the
			// write's resourceVersion precondition then proves nothing
			// changed in between.
			var err error
			if full, err = c.dynClient(it).Get(ctx, meta.Name, metav1.GetOptions{}); err != nil {
				return fmt.Errorf("reading it: %w", err)
			}
			var om metav1.ObjectMeta
			if m, ok := full.Object["metadata"].(map[string]interface{}); ok {
				if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, &om); err != nil {
					return fmt.Errorf("reading its metadata: %w", err)
				}
			}
			meta = &metav1.PartialObjectMetadata{TypeMeta: meta.TypeMeta, ObjectMeta: om}
		}
		obj := Object{Ref: refOf(it, meta), ManagedFields: meta.ManagedFields, Annotations: meta.Annotations, OwnerReferences: meta.OwnerReferences}
		if full != nil {
			obj.Content = full.Object
		}
		p, err := MakePlan(obj, opts.Plan)
		if err != nil {
			return err
		}
		if p.NeedContent {
			if full == nil {
				if full, err = c.dynClient(it).Get(ctx, meta.Name, metav1.GetOptions{}); err != nil {
					return fmt.Errorf("reading it: %w", err)
				}
			}
			obj.Content = full.Object
			if p, err = MakePlan(obj, opts.Plan); err != nil {
				return err
			}
		}
		plan = p
		res.Object = refOf(it, meta)
		res.Findings, res.Changes = p.Findings, p.Changes
		switch {
		case p.Action == ActionNone:
			res.Result = ResultUnchanged
			return done
		case p.Action == ActionSkip:
			res.Result, res.Reason = ResultSkipped, p.Reason
			return done
		case opts.Check:
			res.Result = ResultNeedsWork
			return done
		case opts.DryRun == write.DryRunClient:
			res.Result, res.Before, res.After = ResultWouldMigrate, p.Before, p.After
			return done
		}
		if opts.DryRun == write.DryRunNone && opts.BackupDir != "" && res.Backup == "" {
			if res.Backup, err = writeBackup(opts.BackupDir, it, meta, p); err != nil {
				res.Result, res.Reason = ResultFailed, fmt.Sprintf("writing the backup: %v (nothing was changed)", err)
				return done
			}
		}
		ops := write.ManagedFieldsOps(p.After)
		if p.RemoveLastApplied {
			ops = append(ops, write.RemoveAnnotationOp(ownership.LastAppliedAnnotation))
		}
		written, err = write.Patch[*metav1.PartialObjectMetadata](ctx, c.metaClient(it), meta.Name, meta.ResourceVersion, ops,
			write.Options{DryRun: opts.DryRun, FieldManager: opts.Manager})
		return err
	})
	switch {
	case errors.Is(err, done):
		return res
	case apierrors.IsNotFound(err):
		res.Result, res.Reason = ResultSkipped, "deleted during the run"
		return res
	case apierrors.IsForbidden(err):
		res.Result, res.Reason = ResultFailed, "forbidden: "+write.APIMessage(err)
		return res
	case err != nil:
		res.Result, res.Reason = ResultFailed, write.APIMessage(err)
		return res
	}
	if opts.DryRun == write.DryRunServer {
		res.Result = ResultWouldMigrate
		return res
	}
	res.Result = ResultMigrated
	if opts.Verify {
		err := verify(ctx, c, it, full, written, plan, opts)
		var note *VerifyNote
		switch {
		case errors.As(err, &note):
			res.Reason = "verified; note: " + note.Msg
		case err != nil:
			res.Result, res.Reason = ResultFailed, fmt.Sprintf("migrated, but the verification failed: %v", err)
		default:
			res.Reason = "verified"
		}
	}
	return res
}
