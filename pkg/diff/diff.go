package diff

import (
	"fmt"
	"reflect"
	"slices"
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/typed"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/admission"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/conflict"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/defaults"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/pathlang"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/remedy"
)

// Options of Compute.
type Options struct {
	// Target makes the commands of the stays (none when its ResourceArg
	// is empty), the conflicts and the resets pasteable.
	Target remedy.Target
	// ShowSecretValues keeps the values of a Secret, in the report and in
	// the ownership; by default they are redacted.
	ShowSecretValues bool
}

// Computed is what Compute finds: the report (what -o json prints) and
// the ownership of the object before and after the apply, which the text
// view lays out line by line in its gutter. The ownership is a view's
// input, not the report's data: it is computed here, once, with what the
// report's changes need.
type Computed struct {
	Report *v1alpha1.DiffReport
	// Live is the ownership of the live object, nil when the apply
	// creates it; Result that of the object after the apply. Their
	// Content is redacted as the report is; they hold what a view walks
	// (ownership.AnalyzeTree), not Fields nor Unowned.
	Live, Result *ownership.Report
}

// StayCommand is the command that merges a manager's entry into the
// applier's, so that the applier's next apply removes what its manifest
// does not set.
func StayCommand(t remedy.Target, manager v1alpha1.Owner) remedy.Command {
	switch manager.Manager {
	case ownership.ClientSideApplyManager:
		return t.SSA([]string{"migrate"}, t.ManagerFlag()...)
	case "before-first-apply", "ancient-changes":
		return t.SSA([]string{"migrate", "fold"}, t.ManagerFlag()...)
	}
	return t.SSA([]string{"migrate", "rename"}, append([]string{"--from", manager.Manager}, t.ManagerFlag()...)...)
}

// Compute builds the diff of one apply from its prediction, asked as the
// user asks it (explained with Options.AlsoForced): when it conflicts, the
// changes are the forced apply's (asked.Forced).
func Compute(asked *conflict.Simulation, o Options) (*Computed, error) {
	forced := asked
	if asked.Forced != nil {
		forced = asked.Forced
	}
	name := ownership.ObjectName(asked.Object.Kind, asked.Object.Namespace, asked.Object.Name)
	r := &v1alpha1.DiffReport{
		TypeMeta:  v1alpha1.NewTypeMeta(v1alpha1.DiffReportKind),
		ApplyMeta: asked.ApplyMeta,
		Conflicts: asked.Conflicts,
		Message:   asked.Message,
		Changes:   []v1alpha1.DiffChange{},
		Stays:     []v1alpha1.Stay{},
		Unknown:   []pathlang.Path{},
		Warnings:  append([]string{}, forced.Warnings...),
		Admission: forced.Admission,
		Unchecked: forced.Unchecked,

		ControlledResets: forced.ControlledResets,
		HelmUpgrade:      asked.HelmUpgrade,
	}
	result, unknown, err := Result(forced)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	for _, p := range unknown {
		r.Unknown = append(r.Unknown, pathlang.Path(p))
	}
	var live *unstructured.Unstructured
	if asked.Action != v1alpha1.ActionCreate && forced.Live != nil {
		live = forced.Live
	}
	if live != nil {
		r.Live = live.Object
	}
	r.Result = result.Object
	out := &Computed{Report: r}
	own := ownership.Options{ShowSecretValues: o.ShowSecretValues}
	if live != nil {
		if out.Live, err = ownership.AnalyzeTree(live, own); err != nil {
			return nil, err
		}
	}
	if out.Result, err = ownership.AnalyzeTree(result, own); err != nil {
		return nil, err
	}

	if err := changes(r, forced, live, result, newOwners(out.Live, out.Result)); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if !forced.ClientSide {
		// (A client-side write keeps no field by ownership: what the
		// manifest does not set stays only if no revision rendered it.)
		stays(r, result, out.Result, forced.Defaults, o)
	}
	r.Remedies = conflictRemedies(r, o.Target)
	r.ResetRemedies = resetRemedies(r, o.Target)
	if !o.ShowSecretValues {
		redactSecrets(r, out)
	}
	return out, nil
}

// Result is the object the server stores after the apply predicted by r:
// the field manager's result with the defaults the apiserver fills in (a
// reset field's default, a new container's), in the form the server
// writes it (quantities canonical, empty structs kept). The paths
// returned are fields whose default is not known here.
func Result(r *conflict.Simulation) (*unstructured.Unstructured, []fieldpath.Path, error) {
	res, unknown := conflict.Defaulted(r)
	// Then admission's built-in plugins, as the apiserver runs them after
	// the field manager (what they set is owned by no one).
	admission.Apply(r.Admission, res)
	if r.Admission.Mutated() {
		// The server defaults what a mutating policy changed.
		if c, ok := r.Defaults.(defaults.Completer); ok {
			c.Complete(res.Object)
		}
		defaults.Finish(res)
	}
	unknown = append(unknown, r.Admission.Unknown()...)
	if r.Storage != nil {
		// Stored at another version: what it does not declare is pruned.
		r.Storage.Prune(res.Object)
	}
	if err := serverForm(res); err != nil {
		return nil, nil, err
	}
	if r.Schema != nil {
		// The defaults tables and the Go types are of the newest minor: a
		// top-level field they added (a status) may be one an older
		// server's kind lacks.
		var added []string
		for k := range res.Object {
			if _, ok := r.Result.Object[k]; !ok {
				added = append(added, k)
			}
		}
		conflict.DeclaredOnly(r.Schema, res, added)
	}
	var generated, known []fieldpath.Path
	if r.Action == v1alpha1.ActionCreate {
		generated, known = defaults.Generated(nil, res)
	} else {
		defaults.DropTypeDependent(r.Live, res)
		generated, known = defaults.Generated(r.Live, res)
	}
	// What the server allocates (a node port on create, or when a
	// ClusterIP Service becomes a NodePort one) is what res still lacks.
	unknown = append(unknown, defaults.Allocated(res)...)
	unknown = append(without(unknown, known), generated...)
	sort.Slice(unknown, func(i, j int) bool { return unknown[i].Compare(unknown[j]) < 0 })
	return res, unknown, nil
}

// without returns paths less those in drop.
func without(paths, drop []fieldpath.Path) []fieldpath.Path {
	out := paths[:0:0]
	for _, p := range paths {
		keep := true
		for _, d := range drop {
			keep = keep && !p.Equals(d)
		}
		if keep {
			out = append(out, p)
		}
	}
	return out
}

// serverForm puts a built-in object in the form the apiserver writes it,
// by a round trip through its Go type: quantities canonical ("0.5" is
// "500m"), numbers typed, empty structs kept as {}.
func serverForm(u *unstructured.Unstructured) error {
	gvk := u.GroupVersionKind()
	if !scheme.Scheme.Recognizes(gvk) {
		return nil
	}
	obj, err := scheme.Scheme.New(gvk)
	if err != nil {
		return nil //nolint:nilerr // not a built-in type after all: left as it is
	}
	// managedFields, which the field manager wrote in this form already,
	// skip the round trip: their fieldsV1 would go through JSON twice. An
	// empty list comes back as none, as it would from the round trip.
	in, managed := withoutManagedFields(u.Object)
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(in, obj); err != nil {
		return fmt.Errorf("the result does not fit %s: %w", gvk, err)
	}
	nilEmpty(reflect.ValueOf(obj))
	out, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return err
	}
	if meta, ok := out["metadata"].(map[string]any); ok {
		if meta["creationTimestamp"] == nil {
			delete(meta, "creationTimestamp")
		}
		if len(managed) > 0 {
			meta["managedFields"] = managed
		}
	}
	u.Object = out
	if gvk.Group == "" && gvk.Kind == "Secret" {
		defaults.SecretStringData(u.Object)
	}
	return nil
}

// withoutManagedFields is obj without its managedFields (copying the top
// level and metadata when it has some), and them.
func withoutManagedFields(obj map[string]any) (map[string]any, []any) {
	meta, _ := obj["metadata"].(map[string]any)
	managed, ok := meta["managedFields"].([]any)
	if !ok {
		return obj, nil
	}
	out := make(map[string]any, len(obj))
	for k, v := range obj {
		out[k] = v
	}
	m := make(map[string]any, len(meta))
	for k, v := range meta {
		if k != "managedFields" {
			m[k] = v
		}
	}
	out["metadata"] = m
	return out, managed
}

// bookkeeping are the metadata fields the server sets on every write,
// left out of the comparison.
var bookkeeping = []string{"managedFields", "resourceVersion", "generation", "creationTimestamp", "uid", "selfLink"}

// comparable is obj without its bookkeeping metadata; nil obj is the
// empty object of result's kind. Only the top level and metadata are
// copies: the rest is obj's, to be read only (typed and compared).
func comparable(obj, like *unstructured.Unstructured) *unstructured.Unstructured {
	if obj == nil {
		out := &unstructured.Unstructured{Object: map[string]any{}}
		out.SetGroupVersionKind(like.GroupVersionKind())
		out.SetName(like.GetName())
		out.SetNamespace(like.GetNamespace())
		return out
	}
	out := &unstructured.Unstructured{Object: make(map[string]any, len(obj.Object))}
	for k, v := range obj.Object {
		out.Object[k] = v
	}
	if meta, ok := obj.Object["metadata"].(map[string]any); ok {
		m := make(map[string]any, len(meta))
		for k, v := range meta {
			if !slices.Contains(bookkeeping, k) {
				m[k] = v
			}
		}
		out.Object["metadata"] = m
	}
	return out
}

// IsBookkeeping tells whether p is server bookkeeping metadata.
func IsBookkeeping(p fieldpath.Path) bool {
	if len(p) < 2 || p[0].FieldName == nil || *p[0].FieldName != "metadata" || p[1].FieldName == nil {
		return false
	}
	for _, k := range bookkeeping {
		if *p[1].FieldName == k {
			return true
		}
	}
	return false
}

// changes compares live and result leaf by leaf, with the schema of the
// apply: a keyed list item is compared by key, an atomic value as a whole.
func changes(r *v1alpha1.DiffReport, forced *conflict.Simulation, live, result *unstructured.Unstructured, own *owners) error {
	tc := forced.Schema
	if tc == nil {
		return fmt.Errorf("no schema to compare with")
	}
	lt, err := tc.ObjectToTyped(comparable(live, result), typed.AllowDuplicates)
	if err != nil {
		return fmt.Errorf("typing the live object: %w", err)
	}
	rt, err := tc.ObjectToTyped(comparable(result, result), typed.AllowDuplicates)
	if err != nil {
		return fmt.Errorf("typing the result: %w", err)
	}
	cmp, err := lt.Compare(rt)
	if err != nil {
		return fmt.Errorf("comparing: %w", err)
	}
	var liveObj map[string]any
	if live != nil {
		liveObj = live.Object
	}
	conflicts := map[string]bool{}
	for _, c := range r.Conflicts {
		conflicts[c.Path.Elements().String()] = true
	}
	// A change is a reset when it lies under a field the apply drops and
	// the apiserver sets back, and ends at that default: a Secret's data
	// that stringData sets anew is modified, not reset.
	underReset := func(p fieldpath.Path) bool {
		after, hasAfter := pathlang.Lookup(result.Object, p)
		for _, rs := range forced.Reset {
			rp := rs.PathElements
			if len(p) < len(rp) || !p[:len(rp)].Equals(rp) {
				continue
			}
			want, ok := pathlang.Lookup(rs.Value, p[len(rp):])
			if ok == hasAfter && (!ok || defaults.SameJSON(want, after)) {
				return true
			}
		}
		return false
	}
	changed := fieldpath.NewSet()
	var pre *unstructured.Unstructured // what admission got, when asked
	add := func(p fieldpath.Path, kind v1alpha1.ChangeKind) {
		if IsBookkeeping(p) {
			return
		}
		changed.Insert(p)
		if kind != v1alpha1.ChangeOwnership && underReset(p) {
			kind = v1alpha1.ChangeReset
		}
		c := v1alpha1.DiffChange{Path: pathlang.Path(p), Change: kind, Elements: p,
			OwnersBefore: at(own.before, p), OwnersAfter: at(own.after, p),
			Conflict: conflicts[p.String()]}
		c.Before, c.HasBefore = pathlang.Lookup(liveObj, p)
		c.After, c.HasAfter = pathlang.Lookup(result.Object, p)
		if by := admission.SetBy(forced.Admission, p); by != "" && kind != v1alpha1.ChangeOwnership {
			// Unless the value is the one admission got.
			if pre == nil {
				pre, _ = conflict.Defaulted(forced)
			}
			if was, ok := pathlang.Lookup(pre.Object, p); !ok || !c.HasAfter || !defaults.SameJSON(was, c.After) {
				c.SetBy = by
			}
		}
		r.Changes = append(r.Changes, c)
	}
	cmp.Modified.Leaves().Iterate(func(p fieldpath.Path) { add(p.Copy(), v1alpha1.ChangeModified) })
	cmp.Added.Leaves().Iterate(func(p fieldpath.Path) { add(p.Copy(), v1alpha1.ChangeAdded) })
	cmp.Removed.Leaves().Iterate(func(p fieldpath.Path) { add(p.Copy(), v1alpha1.ChangeRemoved) })

	// Values that stay while their owners change.
	own.eachLeaf(func(p fieldpath.Path, b, a *ownership.Node) {
		if own.same(b, a) || changed.Has(p) || IsBookkeeping(p) {
			return
		}
		if _, ok := pathlang.Lookup(result.Object, p); !ok {
			return // owned but absent (stale managedFields): no value to show
		}
		add(p.Copy(), v1alpha1.ChangeOwnership)
	})
	sort.SliceStable(r.Changes, func(i, j int) bool { return r.Changes[i].Elements.Compare(r.Changes[j].Elements) < 0 })
	return nil
}

// stays lists, per manager other than the applier, the fields of the main
// resource it owns in the result that the manifest does not set.
func stays(r *v1alpha1.DiffReport, result *unstructured.Unstructured, own *ownership.Report, src defaults.Source, o Options) {
	applier := fieldpath.NewSet()
	for _, s := range own.Managers {
		if s.Manager == r.FieldManager && s.Operation == v1alpha1.OperationApply && s.Subresource == r.Subresource {
			applier = applier.Union(s.Set)
		}
	}
	if r.Subresource != "" {
		return // an apply to a subresource sets only its fields
	}
	lastApplied := fieldpath.MakePathOrDie("metadata", "annotations", ownership.LastAppliedAnnotation)
	// A value the apply changes does not stay, though the manifest does
	// not set it itself: a Secret's data that its stringData sets anew.
	changed := fieldpath.NewSet()
	for _, c := range r.Changes {
		if c.Change != v1alpha1.ChangeOwnership {
			changed.Insert(c.Elements)
		}
	}
	for _, s := range own.Managers {
		// /status is not the main resource's; /scale writes .spec.replicas,
		// which stays when the manifest drops it.
		if s.Subresource == v1alpha1.SubresourceStatus || (s.Manager == r.FieldManager && s.Operation == v1alpha1.OperationApply && s.Subresource == "") {
			continue
		}
		paths, defaulted := []pathlang.Path{}, []pathlang.Path{}
		// Leaves not in applier: Difference would cost the applier's size
		// for each of thousands of managers.
		s.Set.Leaves().Iterate(func(p fieldpath.Path) {
			// The last-applied annotation is kubectl's bookkeeping, which
			// kubectl keeps current itself.
			if applier.Has(p) || changed.Has(p) || IsBookkeeping(p) || p.Equals(lastApplied) || (len(p) > 0 && p[0].FieldName != nil && *p[0].FieldName == "status") {
				return
			}
			v, ok := pathlang.Lookup(result.Object, p)
			switch {
			case !ok:
			case atDefault(src, result.Object, p, v):
				defaulted = append(defaulted, pathlang.Path(p.Copy()))
			default:
				paths = append(paths, pathlang.Path(p.Copy()))
			}
		})
		if len(paths)+len(defaulted) == 0 {
			continue
		}
		st := v1alpha1.Stay{Manager: s.Owner, Paths: paths, Defaulted: defaulted}
		if !ownership.IsSystemManager(s.Manager) && s.Subresource == "" && o.Target.ResourceArg != "" {
			st.Command = StayCommand(o.Target, s.Owner)
		}
		switch {
		case s.Set.Has(ownership.RestartedAtPath):
			// The applier would own the stamp and, its manifest not
			// setting it, remove it at its next apply: a restart of
			// every pod that nobody asked for.
			st.Command = nil
			st.Note = fmt.Sprintf("kubectl rollout restart's stamp: it stays and changes nothing; made %q's, its next apply would remove it, restarting every pod", r.FieldManager)
		case len(st.Command) > 0 && anyInPodTemplate(append(append([]pathlang.Path{}, paths...), defaulted...)):
			st.Note = "they are in the pod template: the next apply that removes them rolls the pods"
		}
		r.Stays = append(r.Stays, st)
	}
}

func anyInPodTemplate(paths []pathlang.Path) bool {
	for _, p := range paths {
		if ownership.InPodTemplate(fieldpath.Path(p)) {
			return true
		}
	}
	return false
}

// atDefault tells whether v, at p in obj, is the default the apiserver
// would give p.
func atDefault(src defaults.Source, obj map[string]any, p fieldpath.Path, v any) bool {
	if src == nil {
		return false
	}
	anc := make([]any, len(p))
	for i := range p {
		anc[i], _ = pathlang.Lookup(obj, p[:i])
	}
	a := src.Removal(p, anc)
	return a.Outcome == defaults.Reset && defaults.SameJSON(a.Value, v)
}

// setRedacted sets a redacted .data.KEY or .stringData.KEY of obj (whose
// maps RedactSecret copied).
func setRedacted(obj map[string]any, p fieldpath.Path, v string) {
	if m, ok := obj[*p[0].FieldName].(map[string]any); ok {
		if _, has := m[*p[1].FieldName]; has {
			m[*p[1].FieldName] = v
		}
	}
}

// setRedactedField sets a redacted value in an ownership report, as
// setRedacted in its content (which Analyze redacted into maps of its
// own).
func setRedactedField(o *ownership.Report, p fieldpath.Path, v string) {
	if o == nil {
		return
	}
	setRedacted(o.Content, p, v)
	for i := range o.Fields {
		if f := &o.Fields[i]; f.HasValue && fieldpath.Path(f.Path).Equals(p) {
			f.Value = v
		}
	}
}

// redactedPair are a Secret value's redactions before and after the
// apply, numbered as watch numbers the values of a fight: the n-th
// distinct value is "<redacted> #n", so a changed value reads
// differently on each side (in the text view, to an external diff
// program, in JSON) and an unchanged one the same, and neither is shown.
func redactedPair(before, after any) (string, string) {
	if reflect.DeepEqual(before, after) {
		return ownership.RedactedN(1), ownership.RedactedN(1)
	}
	return ownership.RedactedN(1), ownership.RedactedN(2)
}

// redactSecrets hides the values of a Secret: in the objects, their
// ownership and in the changes.
func redactSecrets(r *v1alpha1.DiffReport, out *Computed) {
	if !ownership.IsSecret(r.Object.APIVersion, r.Object.Kind) {
		return
	}
	if r.Live != nil {
		r.Live = ownership.RedactSecret(r.Live)
	}
	if r.Result != nil {
		r.Result = ownership.RedactSecret(r.Result)
	}
	admission.RedactSecrets(r.Admission)
	for i := range r.Changes {
		c := &r.Changes[i]
		if !ownership.SecretPath(c.Elements) {
			continue
		}
		if !c.HasBefore || !c.HasAfter {
			if c.HasBefore {
				c.Before = v1alpha1.Redacted
			}
			if c.HasAfter {
				c.After = v1alpha1.Redacted
			}
			continue
		}
		before, after := redactedPair(c.Before, c.After)
		c.Before, c.After = before, after
		if c.Change != v1alpha1.ChangeOwnership && len(c.Elements) == 2 && c.Elements[1].FieldName != nil {
			setRedacted(r.Live, c.Elements, before)
			setRedacted(r.Result, c.Elements, after)
			setRedactedField(out.Live, c.Elements, before)
			setRedactedField(out.Result, c.Elements, after)
		}
	}
	for i := range r.Conflicts {
		c := &r.Conflicts[i]
		if ownership.SecretPath(c.Path.Elements()) {
			if c.LiveValue != nil {
				c.LiveValue = v1alpha1.Redacted
			}
			if c.AppliedValue != nil {
				c.AppliedValue = v1alpha1.Redacted
			}
		}
	}
}

// nilEmpty does what storing a built-in object as protobuf does (the
// server returns what etcd's codec decodes, dry runs too): an empty list
// or map comes back nil, so a field without omitempty reads null. Byte
// strings and what maps hold are left as they are.
func nilEmpty(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			nilEmpty(v.Elem())
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if f := v.Field(i); f.CanSet() {
				nilEmpty(f)
			}
		}
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return
		}
		if !v.IsNil() && v.Len() == 0 && v.CanSet() {
			v.Set(reflect.Zero(v.Type()))
			return
		}
		for i := 0; i < v.Len(); i++ {
			nilEmpty(v.Index(i))
		}
	case reflect.Map:
		if !v.IsNil() && v.Len() == 0 && v.CanSet() {
			v.Set(reflect.Zero(v.Type()))
		}
	}
}
