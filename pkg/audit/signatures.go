package audit

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/pathlang"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/tools"
)

// The signatures of this year's field-ownership incidents, read from
// managedFields as the apiserver writes them.

// bookkeeping is the marks (tools.Marks) an object carries, and the
// first that names the applier ("" when none does: a chart's managed-by
// label alone is also rendered by Argo CD and Flux).
func (c *checker) bookkeeping() ([]v1alpha1.Mark, tools.Mark) {
	var out []v1alpha1.Mark
	var by tools.Mark
	for _, m := range tools.Marks {
		kind, values := v1alpha1.MarkAnnotation, c.obj.Annotations
		if m.Label {
			kind, values = v1alpha1.MarkLabel, c.obj.Labels
		}
		v, ok := values[m.Key]
		if !ok || m.Value != "" && v != m.Value {
			continue
		}
		if m.Key == ownership.LastAppliedAnnotation && isCopy(c.obj) {
			continue
		}
		mark := v1alpha1.Mark{Kind: kind, Key: m.Key, Value: v, Tool: m.Tool}
		if m.Secret {
			mark.Value = ""
		}
		out = append(out, mark)
		if by.Applier == "" {
			by = m
		}
	}
	return out, by
}

// isCopy tells an object whose last-applied annotation a controller copied
// from its owner (a StatefulSet's ControllerRevisions): the controller
// writes it, nobody applies it.
func isCopy(obj Object) bool {
	for _, r := range obj.OwnerReferences {
		if r.Controller != nil && *r.Controller {
			return true
		}
	}
	return false
}

// wiped reports an object without managedFields that an applier applied.
func (c *checker) wiped() {
	marks, by := c.bookkeeping()
	if by.Applier == "" {
		return
	}
	msg := fmt.Sprintf("no managedFields, although %s applies it (%s): wiped by a write while a conversion webhook failed (before Kubernetes 1.37) or by a reset. "+
		"The next server-side apply gives every field to before-first-apply, which then keeps what the manifest drops and conflicts with a non-forced change; "+
		"serve the webhook, let %s apply once, then run the fix: before-first-apply lets go, no value changes",
		by.Tool, markerText(marks[0]), by.Applier)
	f := c.add(v1alpha1.CodeManagedFieldsWiped, metav1.ManagedFieldsEntry{}, nil, msg, c.ssa([]string{"migrate", "release"}, "--from", ownership.BeforeFirstApply))
	if f != nil {
		f.Reference = "https://github.com/kubernetes/kubernetes/issues/136919"
		f.Evidence = &v1alpha1.Evidence{Bookkeeping: marks, Applier: by.Applier}
	}
}

func markerText(m v1alpha1.Mark) string {
	if m.Value == "" {
		return "its " + m.Key + " " + string(m.Kind)
	}
	return fmt.Sprintf("%s %s=%s", m.Kind, m.Key, m.Value)
}

// isApplier tells an Apply entry of the main resource, but handover's
// temporary manager (it holds what it is handing to a controller).
func isApplier(e metav1.ManagedFieldsEntry) bool {
	return e.Operation == metav1.ManagedFieldsOperationApply && e.Subresource == "" && e.Manager != ownership.HandoverManager
}

// union is the fields of the entries sel picks.
func (c *checker) union(sel func(metav1.ManagedFieldsEntry) bool) *fieldpath.Set {
	var sets []*fieldpath.Set
	for i, e := range c.obj.ManagedFields {
		if sel(e) {
			sets = append(sets, c.sets[i])
		}
	}
	return ownership.UnionAll(sets)
}

// without is paths but those in set.
func without(paths []pathlang.Path, set *fieldpath.Set) []pathlang.Path {
	out := []pathlang.Path{}
	for _, p := range paths {
		if !set.Has(fieldpath.Path(p)) {
			out = append(out, p)
		}
	}
	return out
}

func (c *checker) ref(i int) v1alpha1.EntryRef {
	e := c.obj.ManagedFields[i]
	return v1alpha1.EntryRef{Manager: e.Manager, Operation: v1alpha1.Operation(e.Operation), Subresource: v1alpha1.Subresource(e.Subresource), APIVersion: e.APIVersion, Time: e.Time, Fields: len(leaves(c.sets[i]))}
}

// listEdit is what one hand edit holds of the items of one associative
// list in an applied object.
type listEdit struct {
	entry int
	list  fieldpath.Path
	// paths are the items the edit made (it owns the item itself) and
	// the fields it set in others' items.
	paths []pathlang.Path
	// made counts the items it made.
	made int
	// covered are the fields those stand for.
	covered *fieldpath.Set
	// appliers are the entries that apply the field the list lies in.
	appliers []int
}

type listEdits []listEdit

// covered is the fields of entry i that its list findings report.
func (l listEdits) covered(i int) *fieldpath.Set {
	out := fieldpath.NewSet()
	for _, e := range l {
		if e.entry == i {
			out = out.Union(e.covered)
		}
	}
	return out
}

// sharedLists finds, for every hand edit (an Update of the main resource
// by kubectl's imperative commands or Argo CD's UI), the fields it holds
// in the items of an associative list (containers, ports, env) of an
// object whose field the list lies in (.spec) an applier applies; fields
// the applier applies too are adopted, not the edit's any more.
func (c *checker) sharedLists() listEdits {
	var out listEdits
	for i, e := range c.obj.ManagedFields {
		if e.Operation != metav1.ManagedFieldsOperationUpdate || e.Subresource != "" || !IsManual(e) || ownership.IsCSAEntry(e) {
			continue
		}
		byList := map[string]*listEdit{}
		var order []string
		// (Raw leaves: an item made with its key fields alone is one.)
		c.sets[i].Leaves().Iterate(func(p fieldpath.Path) {
			item := innermostItem(p)
			if item == nil || c.appliedFields().Has(p) || p.Equals(restartedAtPath) {
				return
			}
			list := item[:len(item)-1]
			// Whether the applier declares the list can't be read once
			// the edit removed its items (a port's key edited): that it
			// applies the field the list lies in (.spec) stands for it.
			appliers := c.appliersUnder(list[:min(len(list)-1, 1)])
			if len(appliers) == 0 {
				return
			}
			key := list.String()
			le := byList[key]
			if le == nil {
				le = &listEdit{entry: i, list: list.Copy(), covered: fieldpath.NewSet(), appliers: appliers}
				byList[key] = le
				order = append(order, key)
			}
			le.covered.Insert(p.Copy())
			switch {
			case c.sets[i].Has(item):
				// The edit made the item: it goes whole.
				if !slices.ContainsFunc(le.paths, func(q pathlang.Path) bool { return fieldpath.Path(q).Equals(item) }) {
					le.paths = append(le.paths, pathlang.Path(item.Copy()))
					le.made++
				}
			case !isKeyField(p):
				le.paths = append(le.paths, pathlang.Path(p.Copy()))
			}
		})
		sort.Strings(order)
		for _, k := range order {
			// An edit of fields in items the applier declares (an image
			// set by hand) is a manual edit: the items stay the applier's,
			// and nothing is left next to them when the edit is released.
			if byList[k].made > 0 {
				out = append(out, *byList[k])
			}
		}
	}
	return out
}

// innermostItem is the path of the innermost item of an associative list
// that p lies in (p itself when it is one); nil when none.
func innermostItem(p fieldpath.Path) fieldpath.Path {
	for i := len(p) - 1; i > 0; i-- {
		if p[i].Key != nil {
			return p[:i+1]
		}
	}
	return nil
}

// appliersUnder are the appliers that own fields under a path (anywhere
// in the object for an empty path).
func (c *checker) appliersUnder(parent fieldpath.Path) []int {
	key := parent.String()
	if out, ok := c.under[key]; ok {
		return out
	}
	out := []int{}
	for i, e := range c.obj.ManagedFields {
		if !isApplier(e) {
			continue
		}
		s := c.sets[i]
		for _, pe := range parent {
			s = s.WithPrefix(pe)
		}
		if !s.Empty() {
			out = append(out, i)
		}
	}
	c.under[key] = out
	return out
}

// addLists reports the list items hand edits hold in applied objects.
func (c *checker) addLists(lists listEdits) {
	for _, l := range lists {
		e := c.obj.ManagedFields[l.entry]
		var names []string
		entries := []v1alpha1.EntryRef{c.ref(l.entry)}
		for _, a := range l.appliers {
			names = append(names, c.obj.ManagedFields[a].Manager)
			entries = append(entries, c.ref(a))
		}
		list := pathlang.Path(l.list)
		var holds []string
		if l.made > 0 {
			holds = append(holds, fmt.Sprintf("%d item%s of %s it made", l.made, plural(l.made), list))
		}
		if changed := len(l.paths) - l.made; changed > 0 {
			holds = append(holds, fmt.Sprintf("%d field%s it set in items of %s", changed, plural(changed), list))
		}
		msg := fmt.Sprintf("%s, %s, holds %s, in an object %s applies: "+
			"an apply merges its items with these rather than replacing them, so an item whose key was edited stays next to the declared one (two ports or containers of one name, which the apiserver refuses) and the applier can't remove it",
			describe(e), editorName(e.Manager), strings.Join(holds, " and "), strings.Join(names, " and "))
		f := c.addFixes(v1alpha1.CodeSharedListItems, e, l.paths, msg, scopeItems)
		if f != nil {
			f.SharedWith = names
			f.Reference = "https://github.com/argoproj/argo-cd/issues/25474"
			f.Evidence = &v1alpha1.Evidence{Entries: entries, List: list}
		}
	}
}

// editorName says who wrote a hand edit.
func editorName(manager string) string {
	if manager == tools.ArgoCDUI {
		return "an edit in Argo CD's UI"
	}
	if verb, ok := tools.KubectlVerb(manager); ok {
		return "a `kubectl " + verb + "`"
	}
	return "an old kubectl's write"
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// updateAndApply reports managers recorded both as Update and as Apply of
// the main resource: to the apiserver they are two managers, so fields
// only the Update entry holds stay when the manifest drops them, and an
// apply that changes a field both hold conflicts with the manager itself
// (Helm 3's Update and Helm 4's Apply by "helm": helm/helm#31516).
// kubectl's hand edits are manual-edit's, and client-side apply's entry
// csa-leftover's.
func (c *checker) updateAndApply() {
	type entries struct{ updates, applies []int }
	by := map[string]*entries{}
	for i, e := range c.obj.ManagedFields {
		var list *[]int
		switch {
		case isApplier(e):
			if by[e.Manager] == nil {
				by[e.Manager] = &entries{}
			}
			list = &by[e.Manager].applies
		case e.Operation == metav1.ManagedFieldsOperationUpdate && e.Subresource == "" && !IsManual(e) && !ownership.IsCSAEntry(e) && !c.sets[i].Empty():
			if by[e.Manager] == nil {
				by[e.Manager] = &entries{}
			}
			list = &by[e.Manager].updates
		default:
			continue
		}
		*list = append(*list, i)
	}
	var names []string
	for name, es := range by {
		if len(es.updates) > 0 && len(es.applies) > 0 {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		es := by[name]
		var refs []v1alpha1.EntryRef
		var updated, applies []*fieldpath.Set
		for _, i := range es.updates {
			refs = append(refs, c.ref(i))
			updated = append(updated, c.sets[i])
		}
		for _, i := range es.applies {
			refs = append(refs, c.ref(i))
			applies = append(applies, c.sets[i])
		}
		applied := ownership.UnionAll(applies)
		all := leaves(ownership.UnionAll(updated))
		only := without(all, applied)
		shared := []pathlang.Path{}
		for _, p := range all {
			if applied.Has(fieldpath.Path(p)) {
				shared = append(shared, p)
			}
		}
		both := ""
		if len(shared) > 0 {
			both = fmt.Sprintf(", and one that changes any of the %d both hold conflicts with %q itself", len(shared), name)
		}
		msg := fmt.Sprintf("%q writes both as Update and as Apply, two managers to the apiserver: no apply of %q removes the %s only its Update entry holds%s (Helm 3's writes under Helm 4). "+
			"The fix folds the Update entry into the Apply one, whose next apply then removes what the manifest no longer has",
			name, name, countPaths(only), both)
		cmd := c.ssa([]string{"migrate", "rename"}, "--from", name, "--field-manager", name)
		f := c.add(v1alpha1.CodeUpdateAndApply, c.obj.ManagedFields[es.updates[0]], only, msg, cmd)
		if f != nil {
			f.Reference = "https://github.com/helm/helm/issues/31516"
			f.Evidence = &v1alpha1.Evidence{Entries: refs, Shared: shared}
			f.Fixes = []v1alpha1.Fix{{Mode: v1alpha1.FixAdopt, Command: cmd,
				Summary: fmt.Sprintf("%q (Apply) takes the Update entry's fields at their current values; its next apply keeps those its manifest has and removes the others (the declared state)", name)}}
		}
	}
}

// componentScope is what a Kubernetes component writes of the spec of an
// object someone applies, through the main resource: the rule of
// controller-scope. Their metadata (finalizers, annotations, owner
// references) and status are theirs to write; of the spec, only these.
func componentScope(manager, kind string, p fieldpath.Path) bool {
	under := func(fields ...string) bool {
		if len(p) < len(fields) {
			return false
		}
		for i, f := range fields {
			if p[i].FieldName == nil || *p[i].FieldName != f {
				return false
			}
		}
		return true
	}
	switch manager {
	case ownership.KubeControllerManager:
		// The HPA (through /scale, recorded as the main resource by
		// servers before 1.22), volume binding, node IPAM and lifecycle,
		// namespace deletion.
		return under("spec", "replicas") ||
			kind == "PersistentVolumeClaim" && under("spec", "volumeName") ||
			kind == "PersistentVolume" && under("spec", "claimRef") ||
			kind == "Node" && (under("spec", "podCIDR") || under("spec", "podCIDRs") || under("spec", "taints")) ||
			kind == "Namespace" && under("spec", "finalizers")
	case "kube-scheduler":
		return kind == "Pod" && under("spec", "nodeName")
	case "kubelet":
		return kind == "Node"
	}
	return false
}

var componentRules = map[string]string{
	"kube-controller-manager": "kube-controller-manager's controllers write an applied object's metadata and status, and of its spec only .spec.replicas (the horizontal pod autoscaler), a claim's volumeName, a volume's claimRef, a node's podCIDRs and taints, and a namespace's finalizers",
	"kube-scheduler":          "the scheduler writes a pod's status, and of its spec only .spec.nodeName",
	"kubelet":                 "the kubelet writes status, and the spec of its own Node only",
}

// controllerScope reports Kubernetes components that own fields of an
// applied object's spec beyond what they write: someone else wrote them
// under the component's name (a script's --field-manager, a tool
// borrowing it to dodge conflicts), which drift never reports, as
// Kubernetes' own components are not drift. Objects a controller owns
// (an ownerReference with controller: true) are its to write, and objects
// nobody applies are left alone.
func (c *checker) controllerScope() {
	if isCopy(c.obj) || !c.hasApplier() {
		return
	}
	for i, e := range c.obj.ManagedFields {
		rule, ok := componentRules[e.Manager]
		if !ok || e.Operation != metav1.ManagedFieldsOperationUpdate || e.Subresource != "" {
			continue
		}
		out := []pathlang.Path{}
		for _, p := range leaves(c.sets[i]) {
			fp := fieldpath.Path(p)
			if len(fp) > 0 && fp[0].FieldName != nil && *fp[0].FieldName == "spec" && !componentScope(e.Manager, c.obj.Ref.Kind, fp) {
				out = append(out, p)
			}
		}
		if len(out) == 0 {
			continue
		}
		msg := fmt.Sprintf("%s owns %s of the spec that it never writes (%s): %s. A tool or a person wrote them under its name, and drift never reports it, as Kubernetes' own components are not drift",
			describe(e), countPaths(out), out[0], rule)
		f := c.addFixes(v1alpha1.CodeControllerScope, e, out, msg, scopeFields)
		if f != nil {
			f.Evidence = &v1alpha1.Evidence{Rule: rule, Entries: []v1alpha1.EntryRef{c.ref(i)}}
		}
	}
}

// imperativeCreators are kubectl's commands that make objects: what they
// set is in no manifest.
var imperativeCreators = []string{"kubectl-create", "kubectl-run", "kubectl-expose", "kubectl-autoscale"}

// imperative reports an object kubectl create, run, expose or autoscale
// made, that nobody applies (no Apply entry, no client-side apply, no
// last-applied annotation) and no controller owns.
func (c *checker) imperative() {
	if !c.o.Enabled(v1alpha1.CodeImperative) || isCopy(c.obj) || c.hasApplier() {
		return
	}
	if _, ok := c.obj.Annotations[ownership.LastAppliedAnnotation]; ok {
		return
	}
	for _, e := range c.obj.ManagedFields {
		if ownership.IsCSAEntry(e) {
			return
		}
	}
	for i, e := range c.obj.ManagedFields {
		if !slices.Contains(imperativeCreators, e.Manager) || e.Operation != metav1.ManagedFieldsOperationUpdate || e.Subresource != "" {
			continue
		}
		verb := "kubectl " + strings.TrimPrefix(e.Manager, "kubectl-")
		c.add(v1alpha1.CodeImperative, e, leaves(c.sets[i]),
			fmt.Sprintf("made by `%s` (%s) and applied by nobody: it is in no manifest, so a cluster rebuilt from git lacks it; the fix prints what %s set as a manifest to commit, for your applier to apply", verb, describe(e), verb),
			c.ssa([]string{"extract"}, "--manager", e.Manager))
		return
	}
}
