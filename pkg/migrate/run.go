package migrate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/write"
)

// ReportKind is the kind of the migration report.
const ReportKind = "MigrationReport"

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

// ObjectResult is one object's outcome.
type ObjectResult struct {
	Object   ownership.ObjectRef `json:"object"`
	Result   Result              `json:"result"`
	Reason   string              `json:"reason"`
	Changes  []Change            `json:"changes"`
	Findings []string            `json:"findings"`
	// Before and After are set by client dry runs, for the diff.
	Before []metav1.ManagedFieldsEntry `json:"managedFieldsBefore,omitempty"`
	After  []metav1.ManagedFieldsEntry `json:"managedFieldsAfter,omitempty"`
	Backup string                      `json:"backup,omitempty"`
}

// Summary counts outcomes.
type Summary struct {
	Scanned   int `json:"scanned"`
	Migrated  int `json:"migrated"`
	Unchanged int `json:"unchanged"`
	Skipped   int `json:"skipped"`
	Failed    int `json:"failed"`
}

// Report is a run's report.
type Report struct {
	APIVersion   string       `json:"apiVersion"`
	Kind         string       `json:"kind"`
	Mode         Mode         `json:"mode"`
	FieldManager string       `json:"fieldManager"`
	DryRun       write.DryRun `json:"dryRun"`
	Check        bool         `json:"check"`
	BackupDir    string       `json:"backupDir"`
	Summary      Summary      `json:"summary"`
	// Unlisted are the kinds that could not be listed (forbidden, ...):
	// their objects were not looked at.
	Unlisted []string       `json:"unlisted"`
	Objects  []ObjectResult `json:"objects"`
}

// Result is one object's outcome.
type Result string

// The results.
const (
	ResultMigrated     Result = "migrated"
	ResultWouldMigrate Result = "would-migrate" // a dry run
	ResultUnchanged    Result = "unchanged"
	ResultSkipped      Result = "skipped"
	ResultFailed       Result = "failed"
	ResultNeedsWork    Result = "needs-migration" // --check
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
	// Progress is called after each object (from any goroutine).
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
	rep := &Report{APIVersion: ownership.ReportAPIVersion, Kind: ReportKind, Mode: opts.Plan.Mode, FieldManager: opts.Plan.Target, DryRun: opts.DryRun, BackupDir: opts.BackupDir, Objects: []ObjectResult{}, Unlisted: []string{}}
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
				sum := rep.Summary
				mu.Unlock()
				if opts.Progress != nil {
					opts.Progress(sum)
				}
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

// verify re-reads the object and compares every value with before. When
// another writer changed it after the migration, the values can't be
// attributed: that is a note, not a failure.
func verify(ctx context.Context, c Clients, it Item, before *unstructured.Unstructured, written *metav1.PartialObjectMetadata, p *Plan, opts RunOptions) error {
	after, err := c.dynClient(it).Get(ctx, it.Meta.Name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	if written != nil && after.GetResourceVersion() != written.ResourceVersion {
		return &VerifyNote{Msg: "another writer changed the object right after the migration, so its values were not compared"}
	}
	strip := func(u *unstructured.Unstructured) map[string]interface{} {
		o := u.DeepCopy().Object
		unstructured.RemoveNestedField(o, "metadata", "managedFields")
		unstructured.RemoveNestedField(o, "metadata", "resourceVersion")
		if p.RemoveLastApplied {
			unstructured.RemoveNestedField(o, "metadata", "annotations", ownership.LastAppliedAnnotation)
			if a, ok, _ := unstructured.NestedMap(o, "metadata", "annotations"); ok && len(a) == 0 {
				unstructured.RemoveNestedField(o, "metadata", "annotations")
			}
		}
		return o
	}
	if before != nil {
		if path := firstDifference(strip(before), strip(after), ""); path != "" {
			return fmt.Errorf("%s differs from before the migration", path)
		}
	}
	if opts.VerifyApply != nil {
		return opts.VerifyApply(ctx, after)
	}
	return nil
}

// firstDifference returns the first path where two values differ, or "".
func firstDifference(a, b interface{}, path string) string {
	am, aok := a.(map[string]interface{})
	bm, bok := b.(map[string]interface{})
	if aok && bok {
		keys := map[string]bool{}
		for k := range am {
			keys[k] = true
		}
		for k := range bm {
			keys[k] = true
		}
		sorted := make([]string, 0, len(keys))
		for k := range keys {
			sorted = append(sorted, k)
		}
		sort.Strings(sorted)
		for _, k := range sorted {
			if d := firstDifference(am[k], bm[k], path+"."+k); d != "" {
				return d
			}
		}
		return ""
	}
	if !reflect.DeepEqual(a, b) {
		if path == "" {
			return "the object"
		}
		return path
	}
	return ""
}

// VerifyNote is a verification finding that the migration did not cause
// and cannot fix: the last-applied configuration conflicts with a manager
// that changed a field after the client-side apply (kubectl scale, say).
// Client-side apply would have overwritten that change silently; a
// server-side apply reports it.
type VerifyNote struct{ Msg string }

func (n *VerifyNote) Error() string { return n.Msg }

// BackupFormat marks a file as a kubectl-ssa backup: undo reads no other.
const BackupFormat = "kubectl-ssa.io/managedfields-backup/v1"

// Backup is what a backup file holds. LastApplied is kept only when the
// migration removed the annotation (undo restores it); the file is
// written with mode 0600 as it may hold a Secret's last-applied data.
type Backup struct {
	Format          string                      `json:"format"`
	Resource        schema.GroupVersionResource `json:"resource"`
	Kind            string                      `json:"kind"`
	Namespaced      bool                        `json:"namespaced"`
	Namespace       string                      `json:"namespace"`
	Name            string                      `json:"name"`
	UID             string                      `json:"uid"`
	ResourceVersion string                      `json:"resourceVersion"`
	ManagedFields   []metav1.ManagedFieldsEntry `json:"managedFields"`
	LastApplied     *string                     `json:"lastApplied,omitempty"`
	Migrated        []metav1.ManagedFieldsEntry `json:"migratedManagedFields"`
}

// isBackup tells whether a file is a kubectl-ssa backup, by its format
// marker: other JSON files in the directory are not touched.
func isBackup(path string) bool {
	data, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	var b struct {
		Format string `json:"format"`
	}
	return json.Unmarshal(data, &b) == nil && b.Format == BackupFormat
}

func backupPath(dir string, it Item, m *metav1.PartialObjectMetadata) string {
	g := it.Resource.GVR.Group
	if g == "" {
		g = "core"
	}
	ns := m.Namespace
	if ns == "" {
		ns = "_cluster"
	}
	return filepath.Join(dir, g+"."+it.Resource.GVR.Version+"."+it.Resource.GVR.Resource, ns, m.Name+".json")
}

func writeBackup(dir string, it Item, m *metav1.PartialObjectMetadata, p *Plan) (string, error) {
	b := Backup{Format: BackupFormat, Resource: it.Resource.GVR, Kind: it.Resource.Kind, Namespaced: it.Resource.Namespaced, Namespace: m.Namespace, Name: m.Name,
		UID: string(m.UID), ResourceVersion: m.ResourceVersion, ManagedFields: m.ManagedFields, Migrated: p.After}
	if p.RemoveLastApplied {
		if s, ok := m.Annotations[ownership.LastAppliedAnnotation]; ok {
			b.LastApplied = &s
		}
	}
	data, err := json.MarshalIndent(b, "", "  ")
	if err != nil {
		return "", err
	}
	path := backupPath(dir, it, m)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return "", err
	}
	// A file left by an earlier run keeps its mode through WriteFile.
	if err := os.Chmod(tmp, 0o600); err != nil {
		return "", err
	}
	return path, os.Rename(tmp, path)
}

// Undo restores the managedFields (and annotation) saved in a backup
// directory. An object changed since the migration is refused unless
// force; a deleted or re-created object (other uid) is always refused.
func Undo(ctx context.Context, c Clients, dir string, dryRun write.DryRun, force bool) (*Report, error) {
	rep := &Report{APIVersion: ownership.ReportAPIVersion, Kind: ReportKind, Mode: ModeUndo, DryRun: dryRun, BackupDir: dir, Objects: []ObjectResult{}, Unlisted: []string{}}
	var files []string
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(path, ".json") && isBackup(path) {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading the backup directory: %w", err)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no backups in %s: give the directory migrate printed when it started", dir)
	}
	sort.Strings(files)
	for _, f := range files {
		rep.Summary.Scanned++
		res := undoOne(ctx, c, f, dryRun, force, write.DefaultBackoff)
		switch res.Result {
		case ResultMigrated, ResultWouldMigrate:
			rep.Summary.Migrated++
		case ResultUnchanged:
			rep.Summary.Unchanged++
		case ResultSkipped:
			rep.Summary.Skipped++
		default:
			rep.Summary.Failed++
		}
		rep.Objects = append(rep.Objects, res)
	}
	return rep, nil
}

func undoOne(ctx context.Context, c Clients, file string, dryRun write.DryRun, force bool, backoff wait.Backoff) ObjectResult {
	res := ObjectResult{Changes: []Change{}, Findings: []string{}, Backup: file}
	data, err := os.ReadFile(file)
	if err != nil {
		res.Result, res.Reason = ResultFailed, err.Error()
		return res
	}
	var b Backup
	if err := json.Unmarshal(data, &b); err != nil || b.Format != BackupFormat {
		res.Result, res.Reason = ResultFailed, fmt.Sprintf("%s is not a kubectl-ssa backup", file)
		return res
	}
	res.Object = ownership.ObjectRef{APIVersion: b.Resource.GroupVersion().String(), Kind: b.Kind, Namespace: b.Namespace, Name: b.Name, UID: b.UID}
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
	err = write.RetryOnConflict(ctx, backoff, func(ctx context.Context, _ int) error {
		live, err := c.metaClient(it).Get(ctx, b.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		res.Object.ResourceVersion = live.ResourceVersion
		switch {
		case string(live.UID) != b.UID:
			res.Result, res.Reason = ResultSkipped, "the object was deleted and created again since the migration"
			return done
		case SameManagedFields(live.ManagedFields, b.ManagedFields) && (b.LastApplied == nil || live.Annotations[ownership.LastAppliedAnnotation] == *b.LastApplied):
			res.Result, res.Reason = ResultUnchanged, "already as in the backup"
			return done
		case !SameManagedFields(live.ManagedFields, b.Migrated) && !force:
			res.Result, res.Reason = ResultSkipped, "its managedFields changed since the migration (someone wrote to it): restoring would lose that; use --force to restore anyway"
			return done
		}
		ops := write.ManagedFieldsOps(b.ManagedFields)
		if b.LastApplied != nil {
			if live.Annotations == nil {
				ops = append(ops, write.PatchOp{Op: "add", Path: "/metadata/annotations", Value: map[string]string{}})
			}
			ops = append(ops, write.PatchOp{Op: "add", Path: write.AnnotationPointer(ownership.LastAppliedAnnotation), Value: *b.LastApplied})
		}
		if dryRun == write.DryRunClient {
			res.Result = ResultWouldMigrate
			return done
		}
		wo := write.Options{DryRun: dryRun, FieldManager: manager}
		out, err := write.Patch[*metav1.PartialObjectMetadata](ctx, c.metaClient(it), live.Name, live.ResourceVersion, ops, wo)
		if err != nil || b.LastApplied == nil || dryRun == write.DryRunServer {
			return err
		}
		// Writing the annotation stamped its manager's entry with the
		// time of the undo: put the saved entries back as they were.
		_, err = write.Patch[*metav1.PartialObjectMetadata](ctx, c.metaClient(it), live.Name, out.ResourceVersion, write.ManagedFieldsOps(b.ManagedFields), wo)
		return err
	})
	switch {
	case errors.Is(err, done):
		return res
	case err != nil:
		res.Result, res.Reason = ResultFailed, write.APIMessage(err)
		return res
	}
	res.Result = ResultMigrated
	if dryRun == write.DryRunServer {
		res.Result = ResultWouldMigrate
	}
	res.Changes = append(res.Changes, Change{Change: "managedFields restored from the backup"})
	return res
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
