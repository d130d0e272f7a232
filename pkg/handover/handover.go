package handover

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/pathlang"
)

// The types of the report, defined in package v1alpha1.
type (
// LastAppliedEdit is a step's edit of the last-applied annotation.
)

// DefaultTempManager holds fields during a handover to a controller.
const DefaultTempManager = ownership.HandoverManager

// Request says what to move.
type Request struct {
	// Fields to move; with Mode release and no fields, all of From's.
	Fields []fieldpath.Path
	From   string
	// FromSubresource narrows From to entries of one subresource ("-"
	// for the main resource); empty: every entry named From.
	FromSubresource string
	To              string
	Mode            v1alpha1.HandoverMode
	TempManager     string
	Wait            bool

	// resume marks the plans Run makes after its first write: the source
	// manager may be gone by then because it released everything.
	resume bool
}

// Error is a handover that can't be done; nothing was written.
type Error struct {
	Msg string
	// Fix is the command, as words, that makes the handover possible
	// (the caller adds its connection flags and quotes it); nil if none.
	Fix []string
}

func (e *Error) Error() string { return e.Msg }

func fail(format string, args ...any) error { return &Error{Msg: fmt.Sprintf(format, args...)} }

// Plan computes the steps that remain for req on live. It is pure.
func Plan(live *unstructured.Unstructured, req Request, now time.Time) (*v1alpha1.HandoverReport, error) {
	if req.TempManager == "" {
		req.TempManager = DefaultTempManager
	}
	pl := &planner{live: live, req: req, now: now,
		name:    ownership.ObjectName(live.GetKind(), live.GetNamespace(), live.GetName()),
		entries: live.GetManagedFields(),
		r: &v1alpha1.HandoverReport{TypeMeta: v1alpha1.NewTypeMeta(v1alpha1.HandoverReportKind), Object: ownership.RefOf(live), From: req.From, FromSubresource: req.FromSubresource, To: req.To,
			Steps: []v1alpha1.HandoverStep{}, Orphaned: []pathlang.Path{}, AppliersOnly: []pathlang.Path{}, Warnings: []string{}, Before: []v1alpha1.FieldState{}, After: []v1alpha1.FieldState{}}}
	if err := pl.selectFields(); err != nil {
		return nil, err
	}
	if err := pl.selectMode(); err != nil {
		return nil, err
	}
	if err := pl.ownerSets(); err != nil {
		return nil, err
	}
	// A client-side apply source also lets go of the fields in its
	// last-applied annotation, even when it gave up its managedFields
	// before (by an earlier version of this command, say).
	var err error
	if pl.edit, err = planLastApplied(live, req, pl.mode, pl.fields); err != nil {
		return nil, err
	}
	if msg, done := pl.alreadyDone(); done {
		return pl.complete(msg), nil
	}
	if err := pl.checkOwned(); err != nil {
		return nil, err
	}
	cur, err := pl.takeStep(pl.entries)
	if err != nil {
		return nil, err
	}
	if cur, err = pl.releaseStep(cur); err != nil {
		return nil, err
	}
	pl.finish(cur)
	pl.r.Status = v1alpha1.HandoverPlanned
	return pl.r, nil
}

// planner is one Plan's state: the request, what the object's entries
// own, and the report its steps fill.
type planner struct {
	live    *unstructured.Unstructured
	req     Request
	now     time.Time
	name    string
	entries []metav1.ManagedFieldsEntry
	r       *v1alpha1.HandoverReport

	mode                    v1alpha1.HandoverMode
	fields                  []fieldpath.Path
	want                    *fieldpath.Set
	fromSet, toSet, tempSet *fieldpath.Set
	fromOwns                *fieldpath.Set
	toHasAll                bool
	edit                    *v1alpha1.LastAppliedEdit
}

func (pl *planner) isFrom(e metav1.ManagedFieldsEntry) bool {
	if e.Manager != pl.req.From {
		return false
	}
	switch pl.req.FromSubresource {
	case "":
		return true
	case "-", "none":
		return e.Subresource == ""
	}
	return e.Subresource == pl.req.FromSubresource
}

// isTo: the same name can be both sides ("kubectl" Apply taking the field
// from "kubectl" through /scale): the source's entries are not the
// target's.
func (pl *planner) isTo(e metav1.ManagedFieldsEntry) bool {
	return e.Manager == pl.req.To && !pl.isFrom(e)
}

func (pl *planner) isTemp(e metav1.ManagedFieldsEntry) bool {
	return e.Manager == pl.req.TempManager && e.Operation == metav1.ManagedFieldsOperationApply
}

// selectFields reads what the source owns and the fields to move (all of
// the source's for a release that names none), each set on the object.
func (pl *planner) selectFields() error {
	req, name, live := pl.req, pl.name, pl.live
	var err error
	if pl.fromSet, err = ownership.Union(pl.entries, pl.isFrom); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	fields := req.Fields
	if wholeObject(fields) {
		// The empty path would expand to every field From owns: all of
		// them is a release with no fields, asked for by name (--all).
		return fail("%s: a field's path is empty and names the whole object: name the fields, or release all of %q's with kubectl ssa handover release --all", name, req.From)
	}
	if len(fields) == 0 {
		if req.Mode != v1alpha1.HandoverRelease {
			return fail("%s: name the fields to hand over with --field", name)
		}
		pl.fromSet.Iterate(func(p fieldpath.Path) { fields = append(fields, p.Copy()) })
		if len(fields) == 0 {
			return fail("%s: %q owns no fields (managers: %s)", name, req.From, managerList(pl.entries))
		}
	}
	for _, p := range fields {
		// A release may drop ownership of a path the object no longer has
		// (stale managedFields, or after its own write removed the
		// last-applied annotation and with it an empty annotations map);
		// a handover needs the value.
		if req.Mode == v1alpha1.HandoverRelease && (pl.fromSet.Has(p) || req.resume) {
			continue
		}
		if _, ok := pathlang.Lookup(live.Object, p); !ok && !storedAsData(live, p) {
			return fail("%s: %s is not set on the object: check the path with kubectl ssa who-owns %s", name, pathlang.Path(p), strings.ToLower(live.GetKind())+"/"+live.GetName())
		}
	}
	pl.fields = fields
	return nil
}

// selectMode resolves auto: a manager that applies takes fields by
// applying; one that only writes through Update (a controller) must write
// them itself. The fields of a handover expand to the subtrees the source
// owns.
func (pl *planner) selectMode() error {
	mode := pl.req.Mode
	if mode == v1alpha1.HandoverAuto || mode == "" {
		applies, updates := false, false
		for _, e := range pl.entries {
			if pl.isTo(e) {
				applies = applies || e.Operation == metav1.ManagedFieldsOperationApply
				updates = updates || e.Operation == metav1.ManagedFieldsOperationUpdate
			}
		}
		mode = v1alpha1.HandoverApplier
		if (updates && !applies) || pl.req.To == ownership.KubeControllerManager {
			mode = v1alpha1.HandoverController
		}
	}
	if mode == v1alpha1.HandoverController && pl.req.To == "" {
		return fail("%s: name the controller that takes the fields with --to", pl.name)
	}
	pl.mode, pl.r.Mode = mode, mode
	if mode != v1alpha1.HandoverRelease {
		pl.fields = expandSubtrees(pl.fields, pl.fromSet)
	}
	pl.want = fieldpath.NewSet(pl.fields...)
	pl.r.Fields, pl.r.Content = pl.fields, pl.live.Object
	pl.r.Before = states(pl.live, pl.fields)
	return nil
}

// ownerSets reads what the target and the temporary manager own, and
// checks that the source is on the object.
func (pl *planner) ownerSets() error {
	var err error
	if pl.toSet, err = ownership.Union(pl.entries, pl.isTo); err != nil {
		return fmt.Errorf("%s: %w", pl.name, err)
	}
	if pl.tempSet, err = ownership.Union(pl.entries, pl.isTemp); err != nil {
		return fmt.Errorf("%s: %w", pl.name, err)
	}
	pl.fromOwns = pl.fromSet.Intersection(pl.want)
	pl.toHasAll = pl.toSet.Intersection(pl.want).Equals(pl.want)
	if !pl.req.resume && !hasManager(pl.entries, pl.isFrom) && (pl.mode == v1alpha1.HandoverRelease || !pl.toHasAll) {
		return fail("%s: there is no manager %q on the object (managers: %s)", pl.name, pl.req.From, managerList(pl.entries))
	}
	return nil
}

// alreadyDone tells whether what is already true leaves nothing to move:
// it decides where an interrupted run resumes.
func (pl *planner) alreadyDone() (string, bool) {
	req := pl.req
	switch pl.mode {
	case v1alpha1.HandoverRelease:
		if pl.fromOwns.Empty() {
			return fmt.Sprintf("%q owns none of these fields: nothing to do", req.From), true
		}
	case v1alpha1.HandoverApplier:
		if pl.fromOwns.Empty() && pl.toHasAll {
			return fmt.Sprintf("%q already owns these fields and %q none of them: nothing to do", req.To, req.From), true
		}
	case v1alpha1.HandoverController:
		if pl.fromOwns.Empty() && pl.toHasAll && pl.tempSet.Intersection(pl.want).Empty() {
			return fmt.Sprintf("%q already owns these fields and %q none of them: nothing to do", req.To, req.From), true
		}
	}
	return "", false
}

// complete is the report of a handover with nothing left to move but,
// maybe, the last-applied annotation, which goes only with the release of
// its owner's entry.
func (pl *planner) complete(msg string) *v1alpha1.HandoverReport {
	r := pl.r
	if pl.edit == nil || pl.edit.Deleted {
		r.Status, r.Message = v1alpha1.HandoverAlreadyComplete, msg
		return r
	}
	r.Steps = append(r.Steps, lastAppliedStep(pl.req, pl.edit, pl.entries))
	r.Status = v1alpha1.HandoverPlanned
	return r
}

// checkOwned: every field must be owned by the source, unless an earlier
// run already moved it.
func (pl *planner) checkOwned() error {
	var notOwned []string
	var index *ownership.OwnerIndex
	for _, p := range pl.fields {
		if pl.fromSet.Has(p) || pl.toSet.Has(p) || pl.tempSet.Has(p) {
			continue
		}
		if index == nil {
			var err error
			if index, err = ownership.NewOwnerIndex(pl.entries, nil); err != nil {
				return fmt.Errorf("%s: %w", pl.name, err)
			}
		}
		notOwned = append(notOwned, fmt.Sprintf("%s (owners: %s)", pathlang.Path(p), ownerNames(index.Owners(p))))
	}
	if len(notOwned) > 0 {
		return fail("%s: %q does not own %s", pl.name, pl.req.From, strings.Join(notOwned, ", "))
	}
	return nil
}

// takeStep is the step that gives the fields to their next owner before
// the source lets go: a controller's handover holds them by a temporary
// apply at their current values, an applier's shares them.
func (pl *planner) takeStep(cur []metav1.ManagedFieldsEntry) ([]metav1.ManagedFieldsEntry, error) {
	req, live := pl.req, pl.live
	paths := pathlang.Paths(pl.fields)
	switch pl.mode {
	case v1alpha1.HandoverController:
		if !pl.needHold() {
			return cur, nil
		}
		cfg, err := pl.holdConfig()
		if err != nil {
			return nil, err
		}
		cur, err = ownership.AddPaths(cur, applyEntry(req.TempManager, live.GetAPIVersion(), pl.now), pl.want)
		if err != nil {
			return nil, err
		}
		pl.r.Steps = append(pl.r.Steps, v1alpha1.HandoverStep{Name: v1alpha1.StepHold, Manager: req.TempManager, Paths: paths, Status: v1alpha1.StepPlanned, Apply: cfg, ManagedFields: cur,
			Description: fmt.Sprintf("%q applies the fields at their current values, so that releasing them can never reset them", req.TempManager)})
	case v1alpha1.HandoverApplier:
		if pl.toHasAll {
			return cur, nil
		}
		cur, err := ownership.AddPaths(cur, applyEntry(req.To, live.GetAPIVersion(), pl.now), pl.want)
		if err != nil {
			return nil, err
		}
		pl.r.Steps = append(pl.r.Steps, v1alpha1.HandoverStep{Name: v1alpha1.StepShare, Manager: req.To, Paths: paths, Status: v1alpha1.StepPlanned, ManagedFields: cur,
			Description: fmt.Sprintf("%q takes shared ownership at the current values (as applying the same values would)", req.To)})
		return cur, nil
	}
	return cur, nil
}

// needHold: some field is still the source's alone.
func (pl *planner) needHold() bool {
	for _, p := range pl.fields {
		if !pl.tempSet.Has(p) && !pl.toSet.Has(p) && pl.fromSet.Has(p) {
			return true
		}
	}
	return false
}

// holdConfig is the temporary manager's apply: the fields at their live
// values, on the object's name.
func (pl *planner) holdConfig() (map[string]any, error) {
	live := pl.live
	cfg, err := ownership.Partial(live.Object, pl.fields)
	if err != nil {
		return nil, fail("%s: %v", pl.name, err)
	}
	cfg["apiVersion"], cfg["kind"] = live.GetAPIVersion(), live.GetKind()
	meta := map[string]any{"name": live.GetName()}
	if live.GetNamespace() != "" {
		meta["namespace"] = live.GetNamespace()
	}
	if m, ok := cfg["metadata"].(map[string]any); ok {
		for k, v := range m {
			meta[k] = v
		}
	}
	cfg["metadata"] = meta
	return cfg, nil
}

// releaseStep is the source letting go of the fields (and of its
// last-applied annotation's), or of the annotation's alone.
func (pl *planner) releaseStep(cur []metav1.ManagedFieldsEntry) ([]metav1.ManagedFieldsEntry, error) {
	req, edit := pl.req, pl.edit
	if pl.fromOwns.Empty() {
		if edit != nil {
			pl.r.Steps = append(pl.r.Steps, lastAppliedStep(req, edit, cur))
		}
		return cur, nil
	}
	cur, _, err := ownership.RemovePaths(cur, pl.isFrom, pl.want)
	if err != nil {
		return nil, err
	}
	desc := fmt.Sprintf("%q gives up the fields (its managedFields entry only: no value changes)", req.From)
	switch {
	case edit != nil && edit.Deleted:
		desc = fmt.Sprintf("%q gives up the fields, and its last-applied annotation goes with them (no field's value changes; its next client-side apply deletes nothing)", req.From)
	case edit != nil:
		desc = fmt.Sprintf("%q gives up the fields in its managedFields entry and in its last-applied annotation, in one write (no field's value changes; its next client-side apply can't reset them)", req.From)
	}
	pl.r.Steps = append(pl.r.Steps, v1alpha1.HandoverStep{Name: v1alpha1.StepRelease, Manager: req.From, Paths: pathlang.Paths(setPaths(pl.fromOwns)), Status: v1alpha1.StepPlanned, ManagedFields: cur, LastApplied: edit,
		Description: desc})
	return cur, nil
}

// finish adds the wait of a controller's handover, and what a release
// leaves without an owner.
func (pl *planner) finish(cur []metav1.ManagedFieldsEntry) {
	r, req := pl.r, pl.req
	if pl.mode == v1alpha1.HandoverController && req.Wait {
		r.Steps = append(r.Steps, v1alpha1.HandoverStep{Name: v1alpha1.StepWait, Manager: req.To, Paths: pathlang.Paths(pl.fields), Status: v1alpha1.StepPlanned,
			Description: fmt.Sprintf("wait until %q writes the fields, then %q lets go", req.To, req.TempManager)})
	}
	if pl.mode != v1alpha1.HandoverRelease {
		return
	}
	r.Orphaned, r.AppliersOnly = afterRelease(cur, pl.fields)
	if pl.edit != nil && pl.edit.Deleted {
		// The annotation goes: it is not left behind without an owner.
		kept := r.Orphaned[:0]
		for _, p := range r.Orphaned {
			if !p.Elements().Equals(lastAppliedPath) {
				kept = append(kept, p)
			}
		}
		r.Orphaned = kept
	}
}

// storedAsData tells whether p is a Secret's .stringData.KEY whose value
// the apiserver stored as .data.KEY: stringData is write-only, never on
// the object, yet owned by whoever applied it.
func storedAsData(live *unstructured.Unstructured, p fieldpath.Path) bool {
	key, ok := ownership.StringDataKey(p)
	if !ok || !ownership.IsSecret(live.GetAPIVersion(), live.GetKind()) {
		return false
	}
	_, ok, _ = unstructured.NestedFieldNoCopy(live.Object, "data", key)
	return ok
}

// Cleanup plans the last step of a handover to a controller: once the
// controller owns every field, the temporary manager releases them.
func Cleanup(live *unstructured.Unstructured, req Request, fields []fieldpath.Path) (*v1alpha1.HandoverStep, bool, error) {
	if req.TempManager == "" {
		req.TempManager = DefaultTempManager
	}
	entries := live.GetManagedFields()
	want := fieldpath.NewSet(fields...)
	toSet, err := ownership.Union(entries, func(e metav1.ManagedFieldsEntry) bool { return e.Manager == req.To })
	if err != nil {
		return nil, false, err
	}
	if !toSet.Intersection(want).Equals(want) {
		return nil, false, nil
	}
	isTemp := func(e metav1.ManagedFieldsEntry) bool {
		return e.Manager == req.TempManager && e.Operation == metav1.ManagedFieldsOperationApply
	}
	tempSet, err := ownership.Union(entries, isTemp)
	if err != nil {
		return nil, false, err
	}
	if tempSet.Intersection(want).Empty() {
		return nil, true, nil
	}
	cur, _, err := ownership.RemovePaths(entries, isTemp, want)
	if err != nil {
		return nil, false, err
	}
	return &v1alpha1.HandoverStep{Name: v1alpha1.StepCleanup, Manager: req.TempManager, Paths: pathlang.Paths(fields), Status: v1alpha1.StepPlanned, ManagedFields: cur,
		Description: fmt.Sprintf("%q owns the fields: %q lets go", req.To, req.TempManager)}, true, nil
}

// wholeObject tells whether one of fields is the root path.
func wholeObject(fields []fieldpath.Path) bool {
	for _, p := range fields {
		if len(p) == 0 {
			return true
		}
	}
	return false
}

// lastAppliedStep edits the annotation of a client-side apply source that
// gave its managedFields up already.
// expandSubtrees adds, to each field, the paths below it that the source
// owns (and stands for a field the source owns only through those): handing over .resources hands over .resources.requests.cpu too,
// which would otherwise lose its owner with the source's release and not
// reach the target.
func expandSubtrees(fields []fieldpath.Path, fromSet *fieldpath.Set) []fieldpath.Path {
	seen := fieldpath.NewSet()
	var out []fieldpath.Path
	add := func(p fieldpath.Path) {
		if !seen.Has(p) {
			seen.Insert(p)
			out = append(out, p.Copy())
		}
	}
	for _, f := range fields {
		var below []fieldpath.Path
		fromSet.Iterate(func(p fieldpath.Path) {
			if len(p) > len(f) && p[:len(f)].Equals(f) {
				below = append(below, p.Copy())
			}
		})
		// A map or struct an applier set is owned through its fields
		// only: the fields below it stand for it.
		if fromSet.Has(f) || len(below) == 0 {
			add(f)
		}
		for _, p := range below {
			add(p)
		}
	}
	return out
}

func lastAppliedStep(req Request, edit *v1alpha1.LastAppliedEdit, entries []metav1.ManagedFieldsEntry) v1alpha1.HandoverStep {
	desc := fmt.Sprintf("%q owns none of the fields but its last-applied annotation still holds them: take them out, so that its next client-side apply can't reset them", req.From)
	return v1alpha1.HandoverStep{Name: v1alpha1.StepLastApplied, Manager: edit.Manager, Paths: edit.Removed, Status: v1alpha1.StepPlanned, ManagedFields: entries, LastApplied: edit, Description: desc}
}

func applyEntry(manager, apiVersion string, now time.Time) metav1.ManagedFieldsEntry {
	t := metav1.NewTime(now.UTC().Truncate(time.Second))
	return metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationApply, APIVersion: apiVersion, Time: &t}
}

func hasManager(entries []metav1.ManagedFieldsEntry, sel func(metav1.ManagedFieldsEntry) bool) bool {
	for _, e := range entries {
		if sel(e) {
			return true
		}
	}
	return false
}

func managerList(entries []metav1.ManagedFieldsEntry) string {
	seen := map[string]bool{}
	var names []string
	for _, e := range entries {
		if !seen[e.Manager] {
			seen[e.Manager] = true
			names = append(names, fmt.Sprintf("%q", e.Manager))
		}
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

func ownerNames(entries []metav1.ManagedFieldsEntry) string {
	if len(entries) == 0 {
		return "nobody"
	}
	var names []string
	for _, e := range entries {
		s := fmt.Sprintf("%q", e.Manager)
		if e.Subresource != "" {
			s += " /" + e.Subresource
		}
		names = append(names, s)
	}
	return strings.Join(names, ", ")
}

// pathStrings prints paths for messages, in the form --field reads back.
func pathStrings(ps []fieldpath.Path) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = pathlang.Path(p).String()
	}
	return out
}

func setPaths(s *fieldpath.Set) []fieldpath.Path {
	var out []fieldpath.Path
	s.Iterate(func(p fieldpath.Path) { out = append(out, p.Copy()) })
	return out
}

// States reads the values and owners of fields.
func states(obj *unstructured.Unstructured, fields []fieldpath.Path) []v1alpha1.FieldState {
	out := make([]v1alpha1.FieldState, 0, len(fields))
	// Entries that do not decode leave the owners unknown (empty).
	index, _ := ownership.NewOwnerIndex(obj.GetManagedFields(), nil)
	for _, p := range fields {
		v, _ := pathlang.Lookup(obj.Object, p)
		var owners []metav1.ManagedFieldsEntry
		if index != nil {
			owners = index.Owners(p)
		}
		fs := v1alpha1.FieldState{Path: pathlang.Path(p), Value: v, Owners: []v1alpha1.Owner{}, StoredAs: ownership.StoredAs(obj.GetAPIVersion(), obj.GetKind(), p)}
		for _, o := range owners {
			fs.Owners = append(fs.Owners, ownership.OwnerOf(o))
		}
		out = append(out, fs)
	}
	return out
}

// States is exported for the runner's after-state.
func States(obj *unstructured.Unstructured, fields []fieldpath.Path) []v1alpha1.FieldState {
	return states(obj, fields)
}

func afterRelease(entries []metav1.ManagedFieldsEntry, fields []fieldpath.Path) (orphaned, appliersOnly []pathlang.Path) {
	orphaned, appliersOnly = []pathlang.Path{}, []pathlang.Path{}
	index, _ := ownership.NewOwnerIndex(entries, nil)
	for _, p := range fields {
		var owners []metav1.ManagedFieldsEntry
		if index != nil {
			owners = index.Owners(p)
		}
		if len(owners) == 0 {
			orphaned = append(orphaned, pathlang.Path(p))
			continue
		}
		allApply := true
		for _, o := range owners {
			allApply = allApply && o.Operation == metav1.ManagedFieldsOperationApply
		}
		if allApply {
			appliersOnly = append(appliersOnly, pathlang.Path(p))
		}
	}
	byString := func(ps []pathlang.Path) func(i, j int) bool {
		return func(i, j int) bool { return ps[i].APIServerString() < ps[j].APIServerString() }
	}
	sort.Slice(orphaned, byString(orphaned))
	sort.Slice(appliersOnly, byString(appliersOnly))
	return orphaned, appliersOnly
}

// IsError tells whether err is a handover that can't be done.
func IsError(err error) bool {
	var e *Error
	return errors.As(err, &e)
}

// RedactSecrets hides the values of a Secret's data in the report: in
// the fields, and inside a field that holds them (.metadata.annotations
// holds client-side apply's copy of the whole Secret).
func RedactSecrets(r *v1alpha1.HandoverReport) {
	redactStates(r.Object, r.Before)
	redactStates(r.Object, r.After)
}

func redactStates(obj v1alpha1.ObjectRef, states []v1alpha1.FieldState) {
	if !ownership.IsSecret(obj.APIVersion, obj.Kind) {
		return
	}
	for i := range states {
		states[i].Value = ownership.RedactValue(states[i].Path.Elements(), states[i].Value)
	}
}
