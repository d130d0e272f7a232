package conflict

import (
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/util/csaupgrade"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/admission"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/convert"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/defaults"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/pathlang"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/tools"
)

// Input is one apply to simulate.
type Input struct {
	// Live is the object as the server has it, with managedFields, at the
	// applied apiVersion; nil when it does not exist (the apply creates it).
	Live *unstructured.Unstructured
	// Applied is the manifest as it would be sent.
	Applied      *unstructured.Unstructured
	FieldManager string
	Force        bool
	// Subresource is "" or "status".
	Subresource string
	// Schema types the object at every group-version in play.
	Schema managedfields.TypeConverter
	// CRD selects the apiserver's custom-resource field manager.
	CRD bool
	// ConversionWebhook says the custom resource's versions are converted
	// by a webhook (spec.conversion.strategy: Webhook), which only the
	// apiserver can call: managers recorded at another version then make
	// Simulate return an UnconvertibleError instead of a guess.
	ConversionWebhook bool
	// Served tells whether the server serves the kind at a version;
	// managers recorded at others are dropped, as the server drops them.
	// Nil: all.
	Served func(schema.GroupVersionKind) bool
	// HasStatus tells whether the kind has a status subresource (which
	// makes main-resource writes reset status).
	HasStatus bool
	// ServerMinor picks the defaults of an older apiserver (0: the
	// tables' own minor).
	ServerMinor int
	// KeepsEmptiedMaps: the apiserver keeps a map an apply empties as {}
	// (KeepsEmptiedMaps: Kubernetes 1.36.0-1.36.2).
	KeepsEmptiedMaps bool
	// KubectlUpgrade models what kubectl apply --server-side does before
	// it applies to an object still carrying client-side apply's
	// ownership: it moves the Update entries that own the last-applied
	// annotation to the field manager (client-go's csaupgrade, in a
	// separate patch the server's dry run never sees).
	KubectlUpgrade bool
	// CSAUpgrade names managers whose Update ownership moves to
	// FieldManager's apply before the apply (client-go's csaupgrade, in a
	// patch of its own), as Helm 4 moves "helm" when it upgrades a release
	// recorded as client-side apply with --server-side=true.
	CSAUpgrade []string
	// ScaleSchema types autoscaling/v1 Scale, for applies to /scale.
	ScaleSchema managedfields.TypeConverter
	// ClientSide, when set, predicts Helm's client-side upgrade of the
	// object instead of an apply (see ClientSide).
	ClientSide *ClientSide
}

// Simulation is one predicted apply: the Report it prints, and what the
// prediction was made of, which diff, --verify, the tools' fixes and the
// views read. It prints as its Report (the rest is never data).
type Simulation struct {
	v1alpha1.ConflictReport

	// FirstApply is kubectl's first apply of the sequence (set when
	// KubectlUpgrade followed it with more steps): what a server dry run
	// of the same apply answers.
	FirstApply *Simulation `json:"-"`

	// Applied is the manifest as sent (its namespace defaulted): the
	// tools' fixes point into it. Set by Predict.
	Applied *unstructured.Unstructured `json:"-"`

	// Live and Result are the object before and after, for rendering.
	// Result is the field manager's: before the apiserver's defaulting.
	Live   *unstructured.Unstructured `json:"-"`
	Result *unstructured.Unstructured `json:"-"`

	// Schema typed the apply; Defaults knows the kind's defaults (nil:
	// not known, and Warnings say so). Set by Predict.
	Schema   managedfields.TypeConverter `json:"-"`
	Defaults defaults.Source             `json:"-"`
	// Storage prunes the result as the apiserver stores it (see
	// Target.Storage). Set by Predict.
	Storage *defaults.Structural `json:"-"`
	// Forced is the forced apply's prediction, with Options.AlsoForced
	// when this apply conflicts.
	Forced *Simulation `json:"-"`
	// ClientSide: a client-side write (Input.ClientSide), which sets
	// what it sets over every owner instead of conflicting.
	ClientSide bool `json:"-"`
}

// Simulate runs the apiserver's field manager over an apply, locally.
// With KubectlUpgrade it follows what kubectl apply --server-side does
// after a successful apply to an object still carrying client-side apply:
// as "kubectl" it keeps the last-applied annotation (an apply by
// kubectl-last-applied), then moves client-side apply's ownership to its
// field manager (client-go's csaupgrade) and applies again, so that fields
// dropped from the manifest are removed.
func Simulate(in Input) (*Simulation, error) {
	r, err := simulate(in)
	if err == nil && r != nil && r.Result != nil && in.Subresource == "" {
		resetToLive(r.Result, in.Live, resetSet(in.Applied.GroupVersionKind().GroupKind(), "", in.HasStatus))
	}
	if err == nil && r != nil {
		noteWas(r)
		if in.Subresource == "" {
			r.ApplierOperation = applierOperation(in.Live, in.FieldManager)
		}
	}
	return r, err
}

// applierOperation is how manager writes live now (see
// Report.ApplierOperation). An Apply entry wins over an Update one: a
// tool that applies server-side can also hold Update entries (Argo CD's
// client-side entry outlives its switch to server-side apply unless the
// migration names it, argo-cd gitops-engine/pkg/sync/sync_context.go
// needsClientSideApplyMigration; helm-controller corrects drift with
// JSON patches, helm-controller internal/action/diff.go ApplyDiff), while
// a write that applies client-side never records an Apply entry.
func applierOperation(live *unstructured.Unstructured, manager string) metav1.ManagedFieldsOperationType {
	if live == nil {
		return ""
	}
	var op metav1.ManagedFieldsOperationType
	for _, e := range live.GetManagedFields() {
		if e.Manager != manager || e.Subresource != "" {
			continue
		}
		if e.Operation == metav1.ManagedFieldsOperationApply {
			return e.Operation
		}
		op = e.Operation
	}
	return op
}

// noteWas gives each reset that changes its field the value it replaces,
// read from the object before the apply (the first of kubectl's
// sequence).
func noteWas(r *Simulation) {
	for i := range r.Reset {
		rs := &r.Reset[i]
		rs.Was = nil
		if !rs.Unchanged && r.Live != nil {
			// (present and null is not absent: it is said as "(not set)")
			if v, ok := pathlang.Lookup(r.Live.Object, rs.PathElements); ok {
				rs.Was = &v
			}
		}
	}
}

// resetToLive does what the storage strategy does to the fields a write
// of the main resource resets (resetSet: status, and a CSR's spec): on
// update they stay as they were (PrepareForUpdate); on create status
// starts empty (PrepareForCreate) and the rest is the applied value.
func resetToLive(result, live *unstructured.Unstructured, reset *fieldpath.Set) {
	if reset == nil {
		return
	}
	reset.Iterate(func(p fieldpath.Path) {
		name := p[0].FieldName
		if len(p) != 1 || name == nil {
			return
		}
		switch {
		case live == nil && *name != "status":
		case live != nil && live.Object[*name] != nil:
			result.Object[*name] = runtime.DeepCopyJSONValue(live.Object[*name])
		default:
			delete(result.Object, *name)
		}
	})
}

// resetWarnings say which fields of the manifest the main resource's
// strategy resets (resetSet): status always; the rest (a CSR's spec,
// set on create) when an update would change it.
func resetWarnings(in Input) []string {
	var out []string
	reset := resetSet(in.Applied.GroupVersionKind().GroupKind(), "", in.HasStatus)
	if reset == nil {
		return nil
	}
	reset.Iterate(func(p fieldpath.Path) {
		name := p[0].FieldName
		if len(p) != 1 || name == nil {
			return
		}
		applied, ok := in.Applied.Object[*name]
		switch {
		case !ok:
		case *name == "status":
			out = append(out, "the manifest sets status, which an apply to the main resource ignores (status is reset there): apply it with --subresource status")
		case in.Live != nil && !contained(applied, in.Live.Object[*name]):
			out = append(out, fmt.Sprintf("the manifest's %s differs from the live one, which the apiserver keeps: a %s's %s is set on create only (delete and create the object to change it)", *name, in.Applied.GetKind(), *name))
		}
	})
	return out
}

// contained tells whether every field a sets has the same value in b.
func contained(a, b any) bool {
	am, ok := a.(map[string]any)
	if !ok {
		return defaults.SameJSON(a, b)
	}
	bm, _ := b.(map[string]any)
	for k, v := range am {
		if !contained(v, bm[k]) {
			return false
		}
	}
	return true
}

func simulate(in Input) (*Simulation, error) {
	if in.ClientSide != nil && in.Subresource == "" {
		return simulateClientSide(in)
	}
	moved, err := csaUpgradeFirst(&in)
	if err != nil {
		return nil, err
	}
	r, err := simulateApply(in)
	if err == nil && moved != "" {
		r.Warnings = append(r.Warnings, moved)
	}
	if err == nil && in.Subresource == "" {
		r.Warnings = append(r.Warnings, resetWarnings(in)...)
	}
	if err != nil || !in.KubectlUpgrade || in.Live == nil || in.Subresource != "" || r.Message != "" {
		return r, err
	}
	first := *r
	cur := r.Result
	if in.FieldManager == "kubectl" && hasLastApplied(cur) && len(annotationOwners(cur, metav1.ManagedFieldsOperationApply)) == 0 {
		just := &unstructured.Unstructured{Object: map[string]any{}}
		just.SetGroupVersionKind(in.Applied.GroupVersionKind())
		just.SetName(cur.GetName())
		just.SetNamespace(cur.GetNamespace())
		just.SetAnnotations(map[string]string{ownership.LastAppliedAnnotation: cur.GetAnnotations()[ownership.LastAppliedAnnotation]})
		step := in
		step.Live, step.Applied, step.FieldManager, step.Force, step.KubectlUpgrade = cur, just, lastAppliedManager, false, false
		r2, err := simulateApply(step)
		if failed := followUpFailed(r, "keeping the last-applied annotation", r2, err); failed {
			return r, nil
		}
		cur = r2.Result
	}
	names := sets.New[string]()
	for _, e := range annotationOwners(cur, metav1.ManagedFieldsOperationUpdate) {
		names.Insert(e.Manager)
	}
	if names.Len() == 0 {
		if cur != r.Result {
			r.FirstApply = &first
		}
		if cur != r.Result || len(r.ManagedFields) == 0 {
			// (Else they are cur's already: simulateApply read them.)
			r.ManagedFields = cur.GetManagedFields()
		}
		r.Result = cur
		return r, nil
	}
	upgraded := cur.DeepCopy()
	if failed := followUpFailed(r, "moving client-side apply's ownership", nil, csaupgrade.UpgradeManagedFields(upgraded, names, in.FieldManager)); failed {
		return r, nil
	}
	again := in
	again.Live, again.KubectlUpgrade = upgraded, false
	r3, err := simulateApply(again)
	if failed := followUpFailed(r, "the second apply", r3, err); failed {
		return r, nil
	}
	// One report for the whole sequence: the first apply's conflicts (none)
	// and object, the final managedFields, and every removal on the way.
	r3.Object, r3.Live, r3.Action = r.Object, r.Live, r.Action
	r3.Conflicts, r3.Released = r.Conflicts, r.Released
	r3.Removed = topmost(append(append([]pathlang.Path{}, r.Removed...), r3.Removed...))
	r3.Reset = append(append([]v1alpha1.Reset{}, r.Reset...), r3.Reset...)
	r3.MaybeReset = append(append([]v1alpha1.MaybeReset{}, r.MaybeReset...), r3.MaybeReset...)
	r3.Warnings = uniqueStrings(append(append([]string{}, r.Warnings...), r3.Warnings...))
	// kubectl writes the annotation itself in its second step: it is not
	// a field the manifest dropped that another manager keeps.
	kept := r3.Retained[:0]
	for _, ret := range r3.Retained {
		if !fieldpath.Path(ret.Path).Equals(ownership.LastAppliedPath) || len(ret.Owners) != 1 || ret.Owners[0].Manager != lastAppliedManager {
			kept = append(kept, ret)
		}
	}
	r3.Retained = kept
	r3.KubectlUpgrade = sets.List(names)
	r3.Warnings = append(r3.Warnings, fmt.Sprintf("kubectl apply --server-side applies, then moves client-side apply's ownership (%s) to %q and applies again: the prediction follows all of it (--kubectl-upgrade=false predicts one plain API apply)", strings.Join(sets.List(names), ", "), in.FieldManager))
	r3.FirstApply = &first
	return r3, nil
}

// csaUpgradeFirst moves the Update ownership of in.CSAUpgrade's managers
// to the applier's apply entry in in.Live, as csaupgrade does before the
// apply, and says so (empty when nothing moved).
func csaUpgradeFirst(in *Input) (string, error) {
	if len(in.CSAUpgrade) == 0 || in.Live == nil || in.Subresource != "" {
		return "", nil
	}
	names := sets.New(in.CSAUpgrade...)
	var moved []string
	for _, e := range ownership.Heads(in.Live) {
		if names.Has(e.Manager) && e.Operation == metav1.ManagedFieldsOperationUpdate && e.Subresource == "" {
			moved = append(moved, e.Manager)
		}
	}
	if len(moved) == 0 {
		return "", nil
	}
	upgraded := in.Live.DeepCopy()
	if err := csaupgrade.UpgradeManagedFields(upgraded, names, in.FieldManager); err != nil {
		return "", fmt.Errorf("moving the Update ownership of %s to %q: %w", strings.Join(sets.List(names), ", "), in.FieldManager, err)
	}
	in.Live = upgraded
	return fmt.Sprintf("the ownership %s holds through Update moves to %q's apply first (client-go's csaupgrade, as Helm 4 does when a release recorded as client-side apply is upgraded server-side): the owners before are shown after that move", strings.Join(sets.List(sets.New(moved...)), ", "), in.FieldManager), nil
}

// lastAppliedManager is the manager kubectl apply --server-side keeps the
// last-applied annotation as.
const lastAppliedManager = "kubectl-last-applied"

// followUpFailed notes a failed follow-up step of kubectl's sequence:
// kubectl only warns about those, and the first apply stands.
func followUpFailed(r *Simulation, step string, got *Simulation, err error) bool {
	switch {
	case err != nil:
		r.Warnings = append(r.Warnings, fmt.Sprintf("kubectl's follow-up step (%s) would fail: %v; the apply itself stands", step, err))
		return true
	case got != nil && got.Message != "":
		r.Warnings = append(r.Warnings, fmt.Sprintf("kubectl's follow-up step (%s) would fail: %s; the apply itself stands", step, got.Message))
		return true
	}
	return false
}

func hasLastApplied(u *unstructured.Unstructured) bool {
	_, ok := u.GetAnnotations()[ownership.LastAppliedAnnotation]
	return ok
}

func annotationOwners(u *unstructured.Unstructured, op metav1.ManagedFieldsOperationType) []metav1.ManagedFieldsEntry {
	return csaupgrade.FindFieldsOwners(u.GetManagedFields(), op,
		fieldpath.NewSet(fieldpath.MakePathOrDie("metadata", "annotations", ownership.LastAppliedAnnotation)))
}

// topmost dedupes paths and drops those below another one of the list.
func topmost(paths []pathlang.Path) []pathlang.Path {
	out := []pathlang.Path{}
	seen := map[string]bool{}
	for _, p := range paths {
		key := p.APIServerString()
		if seen[key] {
			continue
		}
		seen[key] = true
		covered := false
		for _, q := range paths {
			if len(q) < len(p) && fieldpath.Path(p[:len(q)]).Equals(fieldpath.Path(q)) {
				covered = true
				break
			}
		}
		if !covered {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].APIServerString() < out[j].APIServerString() })
	return out
}

// newSimulation is the report of in before the write: empty lists, the
// object named, and the object the write starts from (live, or an empty
// one of the applied kind when the write creates it).
func newSimulation(in Input) (*Simulation, *unstructured.Unstructured, error) {
	if in.Applied == nil {
		return nil, nil, errors.New("nothing to apply")
	}
	gvk := in.Applied.GroupVersionKind()
	name := ownership.ObjectName(gvk.Kind, in.Applied.GetNamespace(), in.Applied.GetName())
	if _, found, _ := unstructured.NestedFieldNoCopy(in.Applied.Object, "metadata", "managedFields"); found {
		return nil, nil, fmt.Errorf("%s: the manifest sets metadata.managedFields, which the apiserver rejects in an apply (\"metadata.managedFields must be nil\"): remove it", name)
	}
	r := &Simulation{ConflictReport: v1alpha1.ConflictReport{
		TypeMeta:       v1alpha1.NewTypeMeta(v1alpha1.ConflictReportKind),
		ApplyMeta:      v1alpha1.ApplyMeta{Action: v1alpha1.ActionApply, FieldManager: in.FieldManager, Force: in.Force, Subresource: v1alpha1.Subresource(in.Subresource)},
		Conflicts:      []v1alpha1.Conflict{},
		Removed:        []pathlang.Path{},
		Reset:          []v1alpha1.Reset{},
		MaybeReset:     []v1alpha1.MaybeReset{},
		Retained:       []v1alpha1.Retained{},
		Released:       []v1alpha1.Owner{},
		Warnings:       []string{},
		KubectlUpgrade: []string{},
	}}
	live := in.Live
	if live == nil {
		if err := checkName(gvk, in.CRD, in.ServerMinor, in.Applied.GetNamespace(), in.Applied.GetName()); err != nil {
			return nil, nil, err
		}
		r.Action = v1alpha1.ActionCreate
		live = &unstructured.Unstructured{Object: map[string]any{}}
		live.SetGroupVersionKind(gvk)
		live.SetName(in.Applied.GetName())
		live.SetNamespace(in.Applied.GetNamespace())
	}
	r.Object = ownership.RefOf(live)
	r.Object.APIVersion, r.Object.Kind = gvk.GroupVersion().String(), gvk.Kind
	r.Live = live
	return r, live, nil
}

// simulateApply runs one apply.
func simulateApply(in Input) (*Simulation, error) {
	r, live, err := newSimulation(in)
	if err != nil {
		return nil, err
	}
	gvk := in.Applied.GroupVersionKind()
	name := ownership.ObjectName(gvk.Kind, in.Applied.GetNamespace(), in.Applied.GetName())
	failed := failedConversions{}
	fm, err := newFieldManager(in, live, failed)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	result, err := fm.Apply(live.DeepCopy(), in.Applied.DeepCopy(), in.FieldManager, false)
	if len(failed) > 0 {
		return nil, unconvertible(name, gvk, live, failed)
	}
	if err != nil {
		var status apierrors.APIStatus
		if !errors.As(err, &status) || !apierrors.IsConflict(err) {
			return nil, fmt.Errorf("%s: the apply would fail: %w", name, err)
		}
		r.Message = status.Status().Message
		conflicts, err := parseConflicts(status.Status(), live, in.Applied)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		for i := range conflicts {
			conflicts[i].Likely = tools.Describe(conflicts[i].Owner(), conflicts[i].Path.APIServerString())
			conflicts[i].StoredAs = ownership.StoredAs(r.Object.APIVersion, r.Object.Kind, conflicts[i].Path.Elements())
		}
		r.Conflicts = conflicts
		if !in.Force {
			r.ManagedFields = live.GetManagedFields()
			if r.ManagedFields == nil {
				r.ManagedFields = []metav1.ManagedFieldsEntry{}
			}
			r.Result = live
			return r, nil
		}
		r.Message = ""
		fm, err = newFieldManager(in, live, failed)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		result, err = fm.Apply(live.DeepCopy(), in.Applied.DeepCopy(), in.FieldManager, true)
		if len(failed) > 0 {
			return nil, unconvertible(name, gvk, live, failed)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: the forced apply would fail: %w", name, err)
		}
	}
	res, ok := result.(*unstructured.Unstructured)
	if !ok {
		return nil, fmt.Errorf("%s: unexpected result type %T", name, result)
	}
	if in.KeepsEmptiedMaps {
		keepEmptied(in.Schema, in.Applied, live, res)
	}
	r.Result = res
	r.ManagedFields = res.GetManagedFields()
	if r.ManagedFields == nil {
		r.ManagedFields = []metav1.ManagedFieldsEntry{}
	}
	if err := diffOwnership(&r.ConflictReport, in, live, res); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return r, nil
}

// unconvertible builds the error for conversions that failed during an
// apply of an object at gvk.
func unconvertible(name string, gvk schema.GroupVersionKind, live *unstructured.Unstructured, failed failedConversions) error {
	e := &UnconvertibleError{Object: name, Kind: gvk.GroupKind(), From: gvk.Version}
	versions := sets.New[string]()
	for to := range failed {
		e.To = append(e.To, to.Version)
		versions.Insert(to.GroupVersion().String())
	}
	sort.Strings(e.To)
	for _, v := range e.To {
		if err := failed[schema.GroupVersionKind{Group: gvk.Group, Version: v, Kind: gvk.Kind}]; err != nil && e.Err == nil {
			e.Err = err
		}
	}
	managers := sets.New[string]()
	for _, m := range ownership.Heads(live) {
		if versions.Has(m.APIVersion) {
			managers.Insert(m.Manager)
		}
	}
	e.Managers = sets.List(managers)
	return e
}

func newFieldManager(in Input, live *unstructured.Unstructured, failed failedConversions) (*managedfields.FieldManager, error) {
	gvk := in.Applied.GroupVersionKind()
	gv := gvk.GroupVersion()
	var versions []schema.GroupVersion
	for _, e := range ownership.Heads(live) {
		if v, err := schema.ParseGroupVersion(e.APIVersion); err == nil {
			versions = append(versions, v)
		}
	}
	reset := ResetFields(gvk, in.Subresource, in.HasStatus, versions)
	conv := versionConverter{served: in.Served, failed: failed, webhook: in.CRD && in.ConversionWebhook}
	if !in.CRD {
		conv.types = in.Schema
	}
	if in.CRD {
		return managedfields.NewDefaultCRDFieldManager(in.Schema, conv, nopDefaulter{}, objectCreator{tc: in.Schema}, gvk, gv, in.Subresource, reset)
	}
	return managedfields.NewDefaultFieldManager(in.Schema, conv, nopDefaulter{}, objectCreator{tc: in.Schema}, gvk, gv, in.Subresource, reset)
}

// conflictCause parses the apiserver's cause message, which names the
// manager as printManager formats it.
var conflictCause = regexp.MustCompile(`^conflict with ("(?:[^"\\]|\\.)*")(?: with subresource ("(?:[^"\\]|\\.)*"))?(?: using (\S+?)(?: at (\S+))?)?$`)

func parseConflicts(st metav1.Status, live, applied *unstructured.Unstructured) ([]v1alpha1.Conflict, error) {
	var out []v1alpha1.Conflict
	if st.Details == nil {
		return nil, fmt.Errorf("conflict without details: %s", st.Message)
	}
	entries := ownership.Heads(live)
	for _, c := range st.Details.Causes {
		if c.Type != metav1.CauseTypeFieldManagerConflict {
			continue
		}
		m := conflictCause.FindStringSubmatch(c.Message)
		if m == nil {
			return nil, fmt.Errorf("unexpected conflict cause %q", c.Message)
		}
		mgr, _ := strconv.Unquote(m[1])
		sub := ""
		if m[2] != "" {
			sub, _ = strconv.Unquote(m[2])
		}
		op := string(metav1.ManagedFieldsOperationApply)
		if m[3] != "" {
			op = string(metav1.ManagedFieldsOperationUpdate)
		}
		cf := v1alpha1.Conflict{Manager: mgr, Operation: v1alpha1.Operation(op), Subresource: v1alpha1.Subresource(sub), APIVersion: m[3]}
		for _, e := range entries {
			if e.Manager == mgr && e.Subresource == sub && string(e.Operation) == op && (m[3] == "" || e.APIVersion == m[3]) {
				cf.APIVersion, cf.Time = e.APIVersion, e.Time
				break
			}
		}
		l, a := atVersion(live, cf.APIVersion), atVersion(applied, cf.APIVersion)
		cf.Path = pathlang.ParseServerPath(c.Field, a.Object, l.Object)
		p := cf.Path.Elements()
		cf.LiveValue, _ = pathlang.Lookup(l.Object, p)
		cf.AppliedValue, _ = pathlang.Lookup(a.Object, p)
		out = append(out, cf)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if a, b := out[i].Path.APIServerString(), out[j].Path.APIServerString(); a != b {
			return a < b
		}
		return out[i].Manager < out[j].Manager
	})
	return out, nil
}

// atVersion returns obj at the group-version a conflicting manager
// recorded, where the conflict's path and values are: the apiserver
// compares there. Objects of kinds that don't convert stay as they are.
func atVersion(obj *unstructured.Unstructured, apiVersion string) *unstructured.Unstructured {
	gv, err := schema.ParseGroupVersion(apiVersion)
	gvk := obj.GroupVersionKind()
	if err != nil || gv.Group != gvk.Group || gv.Version == gvk.Version {
		return obj
	}
	if out, ok, err := convert.ToVersion(obj, gv.Version); ok && err == nil {
		return out
	}
	return obj
}

// diffOwnership fills Removed, Retained and Released.
func diffOwnership(r *v1alpha1.ConflictReport, in Input, live, res *unstructured.Unstructured) error {
	applier := func(e metav1.ManagedFieldsEntry) bool {
		return e.Manager == in.FieldManager && e.Operation == metav1.ManagedFieldsOperationApply && e.Subresource == in.Subresource
	}
	// (GetManagedFields decodes the entries anew each call: once each;
	// res's are r.ManagedFields, which simulateApply has just read.)
	liveEntries, resEntries := live.GetManagedFields(), r.ManagedFields
	before, err := ownership.Union(liveEntries, applier)
	if err != nil {
		return err
	}
	after, err := ownership.Union(resEntries, applier)
	if err != nil {
		return err
	}
	others, err := ownership.NewOwnerIndex(resEntries, func(e metav1.ManagedFieldsEntry) bool { return !applier(e) })
	if err != nil {
		return err
	}
	dropped := before.Difference(after)
	var removed []fieldpath.Path
	secret := ownership.IsSecret(live.GetAPIVersion(), live.GetKind())
	dropped.Iterate(func(p fieldpath.Path) {
		_, inLive := pathlang.Lookup(live.Object, p)
		if !inLive {
			if key, ok := ownership.StringDataKey(p); ok && secret {
				stringDataLeft(r, live, in.Applied, key)
			}
			return
		}
		if _, inResult := pathlang.Lookup(res.Object, p); !inResult {
			removed = append(removed, p.Copy()) // Iterate reuses p
			return
		}
		if owners := others.Owners(p); len(owners) > 0 {
			ret := v1alpha1.Retained{Path: pathlang.Path(p.Copy())}
			for _, e := range owners {
				ret.Owners = append(ret.Owners, ownership.OwnerOf(e))
			}
			r.Retained = append(r.Retained, ret)
		}
	})
	// Report the top-most removed paths (a removed list item implies its
	// fields), each removed or reset to its default.
	classifyRemovals(r, in, live, res, removed)
	// Managers that existed before and are gone after a forced apply.
	if in.Force && len(r.Conflicts) > 0 {
		kept := map[string]bool{}
		for _, e := range resEntries {
			kept[identity(e)] = true
		}
		for _, e := range liveEntries {
			if !kept[identity(e)] && !applier(e) {
				r.Released = append(r.Released, ownership.OwnerOf(e))
			}
		}
	}
	return nil
}

// stringDataLeft notes a Secret's .stringData.KEY the applier no longer
// sets: stringData is write-only, the apiserver stored the value in
// .data.KEY, and dropping the stringData key removes nothing.
func stringDataLeft(r *v1alpha1.ConflictReport, live, applied *unstructured.Unstructured, key string) {
	if _, ok, _ := unstructured.NestedFieldNoCopy(live.Object, "data", key); !ok {
		return
	}
	if _, ok, _ := unstructured.NestedFieldNoCopy(applied.Object, "data", key); ok {
		return // the manifest sets it as data
	}
	sd, d := pathlang.Path(fieldpath.MakePathOrDie("stringData", key)), pathlang.Path(fieldpath.MakePathOrDie("data", key))
	r.Warnings = append(r.Warnings, fmt.Sprintf("the manifest no longer sets %s, but the apiserver stored its value as %s, which this apply does not remove (stringData is write-only and nobody owns %s): remove the key from the Secret yourself if that is meant", sd, d, d))
}

func identity(e metav1.ManagedFieldsEntry) string {
	return e.Manager + "\x00" + string(e.Operation) + "\x00" + e.Subresource + "\x00" + e.APIVersion
}

// RedactSecrets hides the values of a Secret's data in the report and
// in the live object, from which the views quote values ("was ...").
func (s *Simulation) RedactSecrets() {
	if !ownership.IsSecret(s.Object.APIVersion, s.Object.Kind) {
		return
	}
	if s.Live != nil {
		s.Live = &unstructured.Unstructured{Object: ownership.RedactSecret(s.Live.Object)}
	}
	RedactSecrets(&s.ConflictReport)
}

// RedactSecrets hides the values of a Secret's data in the conflicts and
// resets.
func RedactSecrets(r *v1alpha1.ConflictReport) {
	if !ownership.IsSecret(r.Object.APIVersion, r.Object.Kind) {
		return
	}
	admission.RedactSecrets(r.Admission)
	admission.RedactSecrets(r.ForcedAdmission)
	for i := range r.Reset {
		if ownership.SecretPath(r.Reset[i].PathElements) && r.Reset[i].Value != nil {
			r.Reset[i].Value = v1alpha1.Redacted
		}
		if was := r.Reset[i].Was; was != nil {
			v := ownership.RedactValue(r.Reset[i].PathElements, *was)
			r.Reset[i].Was = &v
		}
	}
	for i := range r.Conflicts {
		if ownership.SecretPath(r.Conflicts[i].Path.Elements()) {
			if r.Conflicts[i].LiveValue != nil {
				r.Conflicts[i].LiveValue = v1alpha1.Redacted
			}
			if r.Conflicts[i].AppliedValue != nil {
				r.Conflicts[i].AppliedValue = v1alpha1.Redacted
			}
		}
	}
}
