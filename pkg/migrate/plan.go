package migrate

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/value"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/pathlang"
)

// Managers that only record history.
const (
	BeforeFirstApply = ownership.BeforeFirstApply
	AncientChanges   = ownership.AncientChanges
)

// AnnotationLimit is the apiserver's limit on the total annotation size.
const AnnotationLimit = ownership.AnnotationLimit

// Options say what to plan.
type Options struct {
	Mode v1alpha1.MigrationMode
	// Target is the manager that takes the fields (--field-manager).
	Target string
	// From are more managers folded into the target (exact names).
	From []string
	// Fold folds before-first-apply and ancient-changes into the target.
	Fold bool
	// RemoveLastApplied removes the last-applied annotation too.
	RemoveLastApplied bool
	// Served tells whether the server serves a kind at a version (nil: all).
	Served func(schema.GroupVersionKind) bool
	// Now stamps new entries.
	Now time.Time
}

// Object is what Plan needs of an object: its metadata and, for checks
// of paths, its content (may be nil for metadata-only plans).
type Object struct {
	Ref           v1alpha1.ObjectRef
	ManagedFields []metav1.ManagedFieldsEntry
	Annotations   map[string]string
	// OwnerReferences tell a controller's copy of its owner's
	// last-applied annotation from client-side apply's own.
	OwnerReferences []metav1.OwnerReference
	// Content is the whole object, when it was read; Plan asks for it
	// (NeedContent) only when entries at other apiVersions must be checked.
	Content map[string]any
}

// Plan is the migration of one object.
type Plan struct {
	Object v1alpha1.ObjectRef `json:"object"`
	// Action: migrate (something changes), none (nothing to do), skip
	// (it can't be done safely; see Reason).
	Action   string                     `json:"action"`
	Reason   string                     `json:"reason"`
	Findings []string                   `json:"findings"`
	Changes  []v1alpha1.MigrationChange `json:"changes"`
	// RemoveLastApplied: the annotation goes too.
	RemoveLastApplied bool                        `json:"removeLastApplied"`
	Before            []metav1.ManagedFieldsEntry `json:"managedFieldsBefore,omitempty"`
	After             []metav1.ManagedFieldsEntry `json:"managedFieldsAfter,omitempty"`

	// NeedContent: the plan needs the object's content to decide.
	NeedContent bool `json:"-"`
}

// Plan actions.
const (
	ActionMigrate = "migrate"
	ActionNone    = "none"
	ActionSkip    = "skip"
)

var lastAppliedPath = ownership.LastAppliedPath

// IsCSAEntry tells whether an entry belongs to client-side apply (see
// ownership.IsCSAEntry).
func IsCSAEntry(e metav1.ManagedFieldsEntry) bool { return ownership.IsCSAEntry(e) }

// isCSA tells whether e is client-side apply's entry on obj, not a
// controller's copy of its owner's annotation (ownership.IsCSALeftover).
func (obj Object) isCSA(e metav1.ManagedFieldsEntry) bool {
	return ownership.IsCSALeftover(e, obj.Ref.Kind, obj.Annotations, obj.OwnerReferences)
}

// MakePlan plans one object. It is pure.
func MakePlan(obj Object, opts Options) (*Plan, error) {
	p := &Plan{Object: obj.Ref, Action: ActionNone, Findings: []string{}, Changes: []v1alpha1.MigrationChange{}, Before: obj.ManagedFields}
	name := ownership.ObjectName(obj.Ref.Kind, obj.Ref.Namespace, obj.Ref.Name)
	for i, e := range obj.ManagedFields {
		if _, err := ownership.DecodeEntry(e); err != nil {
			p.Action, p.Reason = ActionSkip, fmt.Sprintf("managedFields[%d] (%s) is corrupt: %v", i, e.Manager, err)
			return p, nil
		}
	}
	p.Findings = findings(obj, opts)

	var next []metav1.ManagedFieldsEntry
	var err error
	switch opts.Mode {
	case v1alpha1.MigrateCSA, v1alpha1.MigrateRename, "":
		next, err = p.fold(obj, opts)
	case v1alpha1.MigrateRelease:
		next = p.release(obj, opts)
	case v1alpha1.MigrateAPIVersions:
		next, err = p.rewriteVersions(obj, opts)
	default:
		return nil, fmt.Errorf("unknown mode %q", opts.Mode)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if p.Action == ActionSkip || p.NeedContent {
		return p, nil
	}
	if opts.RemoveLastApplied && opts.Mode == v1alpha1.MigrateCSA {
		if _, ok := obj.Annotations[ownership.LastAppliedAnnotation]; ok {
			p.RemoveLastApplied = true
			if next == nil {
				next = obj.ManagedFields
			}
			next, _, err = ownership.RemovePaths(next, func(metav1.ManagedFieldsEntry) bool { return true }, fieldpath.NewSet(lastAppliedPath))
			if err != nil {
				return nil, err
			}
		}
	}
	if opts.Mode != v1alpha1.MigrateRelease && next != nil {
		if lost := lostOwners(obj.ManagedFields, next, opts.Target, p.RemoveLastApplied); len(lost) > 0 {
			p.Action, p.Changes = ActionSkip, []v1alpha1.MigrationChange{}
			p.Reason = fmt.Sprintf("migrating would remove %s and give their fields to no one (%q would own none of them): nothing was changed; drop them explicitly with migrate release if that is meant", strings.Join(lost, ", "), opts.Target)
			return p, nil
		}
	}
	if next != nil || p.RemoveLastApplied {
		p.Action = ActionMigrate
		p.After = next
	}
	return p, nil
}

// lostOwners names the entries of before that after no longer has when no
// Apply entry of target takes their fields: a migration moves ownership,
// it never leaves an object with fewer owners and nobody in their place.
// An entry that owned nothing, or only the last-applied annotation that
// the migration removes, loses nothing.
func lostOwners(before, after []metav1.ManagedFieldsEntry, target string, removesLastApplied bool) []string {
	for _, e := range after {
		if e.Manager == target && e.Operation == metav1.ManagedFieldsOperationApply && e.Subresource == "" {
			return nil
		}
	}
	var lost []string
	for _, b := range before {
		if s, err := ownership.DecodeEntry(b); err == nil && ownsNothingLeft(s, removesLastApplied) {
			continue
		}
		kept := false
		for _, a := range after {
			kept = kept || ownership.SameIdentity(a, b)
		}
		if !kept {
			lost = append(lost, fmt.Sprintf("%q (%s)", b.Manager, b.Operation))
		}
	}
	return lost
}

// sources picks the entries folded into the target.
func (p *Plan) sources(obj Object, opts Options) []int {
	from := map[string]bool{}
	for _, f := range opts.From {
		from[f] = true
	}
	var out []int
	for i, e := range obj.ManagedFields {
		isTarget := e.Manager == opts.Target && e.Operation == metav1.ManagedFieldsOperationApply && e.Subresource == ""
		if isTarget || e.Subresource != "" {
			continue
		}
		switch {
		case opts.Mode == v1alpha1.MigrateCSA && obj.isCSA(e):
		case from[e.Manager]:
		case opts.Fold && (e.Manager == BeforeFirstApply || e.Manager == AncientChanges):
		default:
			continue
		}
		out = append(out, i)
	}
	return out
}

// fold merges the source entries into one Apply entry of the target.
// Client-side apply's entries bring only the fields the last-applied
// configuration declares (what an apply of it would own); fields it owns
// only because the apiserver defaulted them, and the annotation itself,
// are left to nobody, as if the object had always been server-side
// applied. Entries recorded at another apiVersion bring their fields only
// where every path exists in the object; otherwise the object is skipped.
func (p *Plan) fold(obj Object, opts Options) ([]metav1.ManagedFieldsEntry, error) {
	idx := p.sources(obj, opts)
	if len(idx) == 0 {
		return nil, nil
	}
	var lastApplied map[string]any
	if s, ok := obj.Annotations[ownership.LastAppliedAnnotation]; ok && opts.Mode == v1alpha1.MigrateCSA {
		if err := json.Unmarshal([]byte(s), &lastApplied); err != nil {
			p.Action, p.Reason = ActionSkip, fmt.Sprintf("the %s annotation is not valid JSON (%v): fix or remove it first", ownership.LastAppliedAnnotation, err)
			return nil, nil
		}
	}
	objVersion := obj.Ref.APIVersion
	var movedSets []*fieldpath.Set
	remove := map[int]bool{}
	var newest *metav1.Time
	for _, i := range idx {
		e := obj.ManagedFields[i]
		set, _ := ownership.DecodeEntry(e)
		if obj.isCSA(e) && lastApplied != nil {
			set = declared(set, lastApplied, ownership.IsSecret(obj.Ref.APIVersion, obj.Ref.Kind))
		}
		set = applyStyle(set)
		if e.APIVersion != objVersion {
			if obj.Content == nil {
				p.NeedContent = true
				return nil, nil
			}
			var missing []string
			set.Iterate(func(path fieldpath.Path) {
				if _, ok := pathlang.Lookup(obj.Content, path); !ok {
					missing = append(missing, path.String())
				}
			})
			if len(missing) > 0 {
				p.Action, p.Reason = ActionSkip, fmt.Sprintf("%q (%s) was recorded at %s and owns %s, which do not exist at %s: its ownership can't be carried over without conversion", e.Manager, e.Operation, e.APIVersion, strings.Join(missing, ", "), objVersion)
				return nil, nil
			}
		}
		movedSets = append(movedSets, set)
		remove[i] = true
		if e.Time != nil && (newest == nil || e.Time.After(newest.Time)) {
			newest = e.Time
		}
		change := fmt.Sprintf("folded into %q (Apply)", opts.Target)
		if opts.Mode == v1alpha1.MigrateCSA && obj.isCSA(e) {
			change = fmt.Sprintf("client-side apply: its declared fields move to %q (Apply)", opts.Target)
		}
		p.Changes = append(p.Changes, v1alpha1.MigrationChange{Manager: e.Manager, Operation: v1alpha1.Operation(e.Operation), Subresource: v1alpha1.Subresource(e.Subresource), APIVersion: e.APIVersion, Change: change})
	}
	moved := ownership.UnionAll(movedSets)
	// Never nil: the sources go, even when nothing is left.
	out := []metav1.ManagedFieldsEntry{}
	targetFound := false
	for i, e := range obj.ManagedFields {
		if remove[i] {
			continue
		}
		if e.Manager == opts.Target && e.Operation == metav1.ManagedFieldsOperationApply && e.Subresource == "" {
			set, _ := ownership.DecodeEntry(e)
			e = *e.DeepCopy()
			if err := ownership.EncodeEntry(&e, set.Union(moved)); err != nil {
				return nil, err
			}
			targetFound = true
		}
		out = append(out, e)
	}
	if !targetFound && !moved.Empty() {
		t := newest
		if t == nil {
			now := metav1.NewTime(opts.Now.UTC().Truncate(time.Second))
			t = &now
		}
		e := metav1.ManagedFieldsEntry{Manager: opts.Target, Operation: metav1.ManagedFieldsOperationApply, APIVersion: objVersion, Time: t}
		if err := ownership.EncodeEntry(&e, moved); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

// declared keeps the paths of set that the last-applied configuration
// sets: what an apply of that configuration would own. A Secret's
// stringData is write-only: the apiserver stores .stringData.KEY as
// .data.KEY, which client-side apply's entry owns; the configuration
// declares it through stringData, and it moves with the rest (as
// kubectl's own upgrade moves it), rather than be left to nobody.
func declared(set *fieldpath.Set, lastApplied map[string]any, secret bool) *fieldpath.Set {
	out := &fieldpath.Set{}
	set.Iterate(func(p fieldpath.Path) {
		if p.Equals(lastAppliedPath) {
			return
		}
		if last := p[len(p)-1]; last.FieldName != nil && hasChildren(set, p) {
			// The "." an Update entry keeps for a map or list whose
			// items it owns one by one: an apply owns the items.
			return
		}
		v, ok := lookupDeclared(lastApplied, p)
		if !ok && secret {
			v, ok = lookupDeclared(lastApplied, stringDataAlias(p))
		}
		if m, isMap := v.(map[string]any); ok && isMap && len(m) == 0 {
			// kubectl writes "annotations": {} into every last-applied
			// configuration; that declares nothing.
			return
		}
		if ok {
			out.Insert(p)
		}
	})
	return out
}

// ownsNothingLeft tells whether s is empty, but for the last-applied
// annotation (and the maps that hold it) when the migration removes it.
func ownsNothingLeft(s *fieldpath.Set, removesLastApplied bool) bool {
	empty := true
	s.Iterate(func(p fieldpath.Path) {
		if removesLastApplied && len(p) <= len(lastAppliedPath) && lastAppliedPath[:len(p)].Equals(p) {
			return
		}
		empty = false
	})
	return empty
}

// stringDataAlias is .stringData.KEY for a Secret's .data.KEY, and p
// itself otherwise.
func stringDataAlias(p fieldpath.Path) fieldpath.Path {
	if len(p) != 2 || p[0].FieldName == nil || *p[0].FieldName != "data" {
		return p
	}
	return fieldpath.Path{fieldpath.PathElement{FieldName: ptr("stringData")}, p[1]}
}

func ptr(s string) *string { return &s }

// lookupDeclared finds a path in a last-applied configuration. The
// configuration often leaves out list-key fields the apiserver defaults
// (a container port's protocol): an item matches a key when every key
// field it sets is equal and at least one is set.
func lookupDeclared(obj map[string]any, p fieldpath.Path) (any, bool) {
	var cur any = obj
	for _, pe := range p {
		if pe.Key == nil {
			var ok bool
			if cur, ok = pathlang.Lookup(cur, fieldpath.Path{pe}); !ok {
				return nil, false
			}
			continue
		}
		items, _ := cur.([]any)
		found := false
		for _, it := range items {
			m, ok := it.(map[string]any)
			if !ok {
				continue
			}
			set, match := 0, true
			for _, f := range *pe.Key {
				v, has := m[f.Name]
				if !has {
					continue
				}
				set++
				if !value.Equals(value.NewValueInterface(v), f.Value) {
					match = false
				}
			}
			if match && set > 0 {
				cur, found = it, true
				break
			}
		}
		if !found {
			return nil, false
		}
	}
	return cur, true
}

// applyStyle drops the "." members Update entries keep for maps and
// structs that have owned children: an Apply entry records the children.
func applyStyle(set *fieldpath.Set) *fieldpath.Set {
	out := &fieldpath.Set{}
	set.Iterate(func(p fieldpath.Path) {
		last := p[len(p)-1]
		if last.FieldName != nil && hasChildren(set, p) {
			return
		}
		out.Insert(p)
	})
	return out
}

func hasChildren(set *fieldpath.Set, p fieldpath.Path) bool {
	cur := set
	for _, pe := range p {
		var ok bool
		if cur, ok = cur.Children.Get(pe); !ok {
			return false
		}
	}
	return !cur.Empty()
}

func (p *Plan) release(obj Object, opts Options) []metav1.ManagedFieldsEntry {
	drop := map[string]bool{}
	for _, f := range opts.From {
		drop[f] = true
	}
	var out []metav1.ManagedFieldsEntry
	changed := false
	for _, e := range obj.ManagedFields {
		if drop[e.Manager] {
			changed = true
			p.Changes = append(p.Changes, v1alpha1.MigrationChange{Manager: e.Manager, Operation: v1alpha1.Operation(e.Operation), Subresource: v1alpha1.Subresource(e.Subresource), APIVersion: e.APIVersion, Change: "released: owns nothing any more"})
			continue
		}
		out = append(out, e)
	}
	if !changed {
		return nil
	}
	if out == nil {
		out = []metav1.ManagedFieldsEntry{}
	}
	return out
}

// rewriteVersions moves entries recorded at unserved versions of the
// object's group to the object's version, when their paths exist there.
func (p *Plan) rewriteVersions(obj Object, opts Options) ([]metav1.ManagedFieldsEntry, error) {
	if opts.Served == nil {
		return nil, nil
	}
	objGV, _ := schema.ParseGroupVersion(obj.Ref.APIVersion)
	var out []metav1.ManagedFieldsEntry
	changed := false
	for _, e := range obj.ManagedFields {
		gv, err := schema.ParseGroupVersion(e.APIVersion)
		if err != nil || opts.Served(gv.WithKind(obj.Ref.Kind)) || e.APIVersion == obj.Ref.APIVersion {
			out = append(out, e)
			continue
		}
		if obj.Content == nil {
			p.NeedContent = true
			return nil, nil
		}
		set, _ := ownership.DecodeEntry(e)
		var missing []string
		set.Iterate(func(path fieldpath.Path) {
			if _, ok := pathlang.Lookup(obj.Content, path); !ok {
				missing = append(missing, path.String())
			}
		})
		if len(missing) > 0 {
			p.Action, p.Reason = ActionSkip, fmt.Sprintf("%q was recorded at %s, which the server no longer serves, and owns %s, which do not exist at %s", e.Manager, e.APIVersion, strings.Join(missing, ", "), obj.Ref.APIVersion)
			return nil, nil
		}
		changed = true
		p.Changes = append(p.Changes, v1alpha1.MigrationChange{Manager: e.Manager, Operation: v1alpha1.Operation(e.Operation), Subresource: v1alpha1.Subresource(e.Subresource), APIVersion: e.APIVersion, Change: "apiVersion rewritten to " + objGV.String()})
		e = *e.DeepCopy()
		e.APIVersion = obj.Ref.APIVersion
		merged := false
		for i := range out {
			if ownership.SameIdentity(out[i], e) {
				a, _ := ownership.DecodeEntry(out[i])
				if err := ownership.EncodeEntry(&out[i], a.Union(set)); err != nil {
					return nil, err
				}
				merged = true
			}
		}
		if !merged {
			out = append(out, e)
		}
	}
	if !changed {
		return nil, nil
	}
	return out, nil
}

// findings says why an object may need attention (migrate --check).
func findings(obj Object, opts Options) []string {
	var out []string
	for _, e := range obj.ManagedFields {
		set, _ := ownership.DecodeEntry(e)
		switch {
		case obj.isCSA(e):
			out = append(out, fmt.Sprintf("client-side apply leftover: %q (Update) owns the last-applied annotation and %d fields", e.Manager, set.Size()))
		case e.Manager == BeforeFirstApply:
			out = append(out, fmt.Sprintf("%s owns %d fields nobody declared (written before the first server-side apply)", BeforeFirstApply, set.Size()))
		case e.Manager == AncientChanges:
			out = append(out, fmt.Sprintf("%s owns %d fields of merged old Update managers", AncientChanges, set.Size()))
		}
		if set.Empty() {
			out = append(out, fmt.Sprintf("%q (%s) owns nothing", e.Manager, e.Operation))
		}
		if opts.Served != nil {
			if gv, err := schema.ParseGroupVersion(e.APIVersion); err == nil && !opts.Served(gv.WithKind(obj.Ref.Kind)) {
				out = append(out, fmt.Sprintf("%q (%s) was recorded at %s, which the server no longer serves: the apiserver drops it on the next write", e.Manager, e.Operation, e.APIVersion))
			}
		}
	}
	if s, ok := obj.Annotations[ownership.LastAppliedAnnotation]; ok && len(s) > AnnotationLimit*8/10 {
		out = append(out, fmt.Sprintf("the last-applied annotation is %d bytes, %d%% of the %d-byte limit on annotations", len(s), len(s)*100/AnnotationLimit, AnnotationLimit))
	}
	sort.Strings(out)
	return out
}
