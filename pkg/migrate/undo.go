package migrate

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/write"
)

// Undo restores the managedFields (and annotation) saved in a backup
// directory. An object changed since the migration is refused unless
// force; a deleted or re-created object (other uid) is always refused.
// Cancelled, it stops between two objects and returns the report of those
// done with the cancellation.
func Undo(ctx context.Context, c Clients, dir string, dryRun v1alpha1.DryRun, force bool) (*v1alpha1.MigrationReport, error) {
	rep := &v1alpha1.MigrationReport{TypeMeta: v1alpha1.NewTypeMeta(v1alpha1.MigrationReportKind), Mode: v1alpha1.MigrateUndo, DryRun: dryRun, BackupDir: dir, Objects: []v1alpha1.ObjectResult{}, Unlisted: []string{}}
	files, err := backupFiles(dir)
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no backups in %s: give the directory migrate printed when it started", dir)
	}
	sort.Strings(files)
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			// Stopped (a signal) between two objects: the report holds
			// those restored.
			return rep, err
		}
		rep.Summary.Scanned++
		// An object begun is finished: its restore and the time put back
		// are one change.
		fctx, stop := write.Finishing(ctx, write.FinishGrace)
		res := undoOne(fctx, c, f, dryRun, force, write.DefaultBackoff)
		stop()
		switch res.Result {
		case v1alpha1.ResultMigrated, v1alpha1.ResultWouldMigrate:
			rep.Summary.Migrated++
		case v1alpha1.ResultUnchanged:
			rep.Summary.Unchanged++
		case v1alpha1.ResultSkipped:
			rep.Summary.Skipped++
		default:
			rep.Summary.Failed++
		}
		rep.Objects = append(rep.Objects, res)
	}
	return rep, nil
}

// backupFiles lists the files under dir undo looks at: each *.json
// file that is not valid JSON without the backup format marker (another
// tool's file). A corrupt or unreadable one is listed, so that undo
// reports it as failed rather than skip it silently.
func backupFiles(dir string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !strings.HasSuffix(path, ".json") {
			return nil
		}
		if _, err := readBackup(path); !errors.Is(err, errForeign) {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading the backup directory: %w", err)
	}
	return files, nil
}

func undoOne(ctx context.Context, c Clients, file string, dryRun v1alpha1.DryRun, force bool, backoff wait.Backoff) v1alpha1.ObjectResult {
	res := v1alpha1.ObjectResult{Changes: []v1alpha1.MigrationChange{}, Findings: []string{}, Backup: file}
	b, err := readBackup(file)
	if err != nil {
		res.Result, res.Reason = v1alpha1.ResultFailed, "the backup cannot be read: "+err.Error()
		return res
	}
	res.Object = v1alpha1.ObjectRef{APIVersion: b.Resource.GroupVersion().String(), Kind: b.Kind, Namespace: b.Namespace, Name: b.Name, UID: b.UID}
	it := Item{Resource: Resource{GVR: b.Resource, Kind: b.Kind, Namespaced: b.Namespaced}, Meta: &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: b.Name, Namespace: b.Namespace}}}
	// The annotation comes back as a change of this request: made under
	// the name of the manager that owned it, the restored managedFields
	// come out exactly as they were.
	manager := "kubectl-ssa"
	if b.LastApplied != nil {
		for _, e := range b.ManagedFields {
			if IsCSAEntry(e) && e.APIVersion == b.Resource.GroupVersion().String() {
				manager = e.Manager
			}
		}
	}
	done := errors.New("done")
	// restored: the first patch went through, and a try after it only puts
	// the entries' times back (a controller may write in between: adding
	// the annotation back bumps a Deployment's generation, and its
	// controller writes the status at once).
	restored := false
	err = write.RetryOnConflict(ctx, backoff, func(ctx context.Context, _ int) error {
		live, err := c.metaClient(it).Get(ctx, b.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if restored {
			return restoreTime(ctx, c, it, b, live, manager, &res, done)
		}
		res.Object.ResourceVersion = live.ResourceVersion
		switch {
		case string(live.UID) != b.UID:
			res.Result, res.Reason = v1alpha1.ResultSkipped, "the object was deleted and created again since the migration"
			return done
		case SameManagedFields(live.ManagedFields, b.ManagedFields) && (b.LastApplied == nil || live.Annotations[ownership.LastAppliedAnnotation] == *b.LastApplied):
			res.Result, res.Reason = v1alpha1.ResultUnchanged, "already as in the backup"
			return done
		case !SameManagedFields(live.ManagedFields, b.Migrated) && !force:
			res.Result, res.Reason = v1alpha1.ResultSkipped, "its managedFields changed since the migration (someone wrote to it): restoring would lose that; use --force to restore anyway"
			return done
		}
		ops := write.ManagedFieldsOps(b.ManagedFields)
		if b.LastApplied != nil {
			if live.Annotations == nil {
				ops = append(ops, write.PatchOp{Op: "add", Path: "/metadata/annotations", Value: map[string]string{}})
			}
			ops = append(ops, write.PatchOp{Op: "add", Path: write.AnnotationPointer(ownership.LastAppliedAnnotation), Value: *b.LastApplied})
		}
		if dryRun == v1alpha1.DryRunClient {
			res.Result = v1alpha1.ResultWouldMigrate
			return done
		}
		wo := write.Options{DryRun: dryRun, FieldManager: manager}
		out, err := write.Patch[*metav1.PartialObjectMetadata](ctx, c.metaClient(it), live.Name, live.ResourceVersion, ops, wo)
		if err != nil || b.LastApplied == nil || dryRun == v1alpha1.DryRunServer {
			return err
		}
		restored = true
		// Writing the annotation stamped its manager's entry with the
		// time of the undo: put the saved entries back as they were.
		again, err := write.Patch[*metav1.PartialObjectMetadata](ctx, c.metaClient(it), live.Name, out.ResourceVersion, write.ManagedFieldsOps(b.ManagedFields), wo)
		if err == nil {
			noteTimeKept(again, b, manager, &res)
		}
		return err
	})
	switch {
	case restored && err != nil && !errors.Is(err, done):
		// Restored all the same: only the time of the entry is the undo's.
		res.Reason = "its " + manager + " entry keeps the time of the undo: putting the saved one back failed: " + write.APIMessage(err)
	case restored:
	case errors.Is(err, done):
		return res
	case err != nil:
		res.Result, res.Reason = v1alpha1.ResultFailed, write.APIMessage(err)
		return res
	}
	res.Result = v1alpha1.ResultMigrated
	if dryRun == v1alpha1.DryRunServer {
		res.Result = v1alpha1.ResultWouldMigrate
	}
	res.Changes = append(res.Changes, v1alpha1.MigrationChange{Change: "managedFields restored from the backup"})
	return res
}

// restoreTime is a try after the restoring patch went through and the
// one that put the entries' times back met a 409: it reads the object
// again and puts back the time the restoring patch gave manager's entry,
// unless another writer changed the restored managedFields or annotation
// meanwhile (res.Reason then says so, and it returns done).
func restoreTime(ctx context.Context, c Clients, it Item, b Backup, live *metav1.PartialObjectMetadata, manager string, res *v1alpha1.ObjectResult, done error) error {
	if string(live.UID) != b.UID || !SameManagedFields(live.ManagedFields, b.ManagedFields) || live.Annotations[ownership.LastAppliedAnnotation] != *b.LastApplied {
		res.Reason = "its " + manager + " entry keeps the time of the undo: another writer changed the object right after the restore"
		return done
	}
	entries, stamped := unstamped(live.ManagedFields, b.ManagedFields, manager)
	if !stamped {
		return nil
	}
	again, err := write.Patch[*metav1.PartialObjectMetadata](ctx, c.metaClient(it), live.Name, live.ResourceVersion, write.ManagedFieldsOps(entries), write.Options{FieldManager: manager})
	if err == nil {
		noteTimeKept(again, b, manager, res)
	}
	return err
}

// noteTimeKept says when the write that put manager's saved time back
// left the undo's: since Kubernetes 1.27 the apiserver keeps the stored
// times of a write that changes nothing but managedFields times
// (KUBE_APISERVER_AVOID_NOOP_SSA_TIMESTAMP_UPDATES), so the entry keeps
// the time of the write that put the annotation back.
func noteTimeKept(out *metav1.PartialObjectMetadata, b Backup, manager string, res *v1alpha1.ObjectResult) {
	if out == nil {
		return
	}
	if _, stamped := unstamped(out.ManagedFields, b.ManagedFields, manager); stamped {
		res.Reason = "its " + manager + " entry keeps the time of the undo: the apiserver ignores a write that changes only managedFields times"
	}
}

// unstamped is live's entries with the time of manager's Update entries
// as saved; stamped tells whether one differed.
func unstamped(live, saved []metav1.ManagedFieldsEntry, manager string) ([]metav1.ManagedFieldsEntry, bool) {
	out := make([]metav1.ManagedFieldsEntry, len(live))
	stamped := false
	for i, e := range live {
		out[i] = e
		if e.Manager != manager || e.Operation != metav1.ManagedFieldsOperationUpdate || e.Subresource != "" {
			continue
		}
		for _, s := range saved {
			if s.Manager == e.Manager && s.Operation == e.Operation && s.Subresource == "" && s.APIVersion == e.APIVersion && !timeEqual(s.Time, e.Time) {
				out[i].Time, stamped = s.Time, true
			}
		}
	}
	return out, stamped
}

func timeEqual(a, b *metav1.Time) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Equal(b)
}

// SameManagedFields compares entries by identity and fields, ignoring
// times and order.
func SameManagedFields(a, b []metav1.ManagedFieldsEntry) bool {
	norm := func(es []metav1.ManagedFieldsEntry) []string {
		var out []string
		for _, e := range es {
			s, err := ownership.DecodeEntry(e)
			if err == nil && s.Empty() {
				continue // the apiserver drops entries that own nothing
			}
			f := ""
			if err == nil {
				if j, err := s.ToJSON(); err == nil {
					f = string(j)
				}
			}
			out = append(out, strings.Join([]string{e.Manager, string(e.Operation), e.Subresource, e.APIVersion, f}, "|"))
		}
		sort.Strings(out)
		return out
	}
	return reflect.DeepEqual(norm(a), norm(b))
}
