package audit

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/pathlang"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/remedy"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/tools"
)

// Severities are the values --fail-on takes, lowest first.
var Severities = v1alpha1.Severities

// Options tune Check.
type Options struct {
	// Expect are globs of the managers expected to own the main
	// resource's fields; when set, others' fields are drift.
	Expect []string
	// Allow are globs of managers whose fields are not drift either.
	Allow []string
	// LastAppliedThreshold is the size in bytes over which the
	// last-applied annotation is a finding.
	LastAppliedThreshold int
	// Served tells whether the server serves a kind at a version (nil:
	// every version is served).
	Served func(schema.GroupVersionKind) bool
	// ClusterFlags are the connection flags the fix commands repeat
	// (--context=prod).
	ClusterFlags []string
	// Cluster names the cluster in findings.
	Cluster string
	// Fix is the fix of drift and manual edits that Finding.Fix names
	// (the others stay in Fixes): FixAdopt (default) when the object has
	// an applier to adopt the fields, or FixForget.
	Fix v1alpha1.FixMode
	// Rules turn codes on (true: the Optional ones) or off (false)
	// against the default set.
	Rules map[v1alpha1.Code]bool
}

// ParseRules reads --rules: +CODE turns a code on (an Optional one), -CODE
// off; several are separated by commas or given again.
func ParseRules(items []string) (map[v1alpha1.Code]bool, error) {
	out := map[v1alpha1.Code]bool{}
	for _, item := range items {
		item = strings.TrimSpace(item)
		on := strings.HasPrefix(item, "+")
		name := strings.TrimLeft(item, "+-")
		if !on && !strings.HasPrefix(item, "-") {
			return nil, fmt.Errorf("%q: start each rule with + (turn it on) or - (turn it off): --rules=+%s", item, name)
		}
		if !slices.Contains(Codes, v1alpha1.Code(name)) {
			return nil, fmt.Errorf("%q: no finding is called %q; the rules are the findings' codes: %s", item, name, codeList())
		}
		if prev, ok := out[v1alpha1.Code(name)]; ok && prev != on {
			return nil, fmt.Errorf("%q: %s is turned both on and off", item, name)
		}
		out[v1alpha1.Code(name)] = on
	}
	return out, nil
}

func codeList() string {
	names := make([]string, len(Codes))
	for i, c := range Codes {
		names[i] = string(c)
	}
	return strings.Join(names, ", ")
}

// Enabled tells whether an audit with these options reports a code.
func (o Options) Enabled(c v1alpha1.Code) bool {
	if on, ok := o.Rules[c]; ok {
		return on
	}
	return !slices.Contains(Optional, c)
}

// FixModes are the values Options.Fix takes.
var FixModes = []v1alpha1.FixMode{v1alpha1.FixAdopt, v1alpha1.FixForget}

// DefaultLastAppliedThreshold leaves room under the annotation limit for
// the object's other annotations and a few more applies.
const DefaultLastAppliedThreshold = 200000

// IsManual tells whether an entry was written by hand: with kubectl, or
// in Argo CD's UI (tools.IsHandEdit): its fields were set by a person,
// outside any manifest.
func IsManual(e metav1.ManagedFieldsEntry) bool { return tools.IsHandEdit(e) }

// Object is what Check reads of an object: metadata only.
type Object struct {
	Ref           v1alpha1.ObjectRef
	ManagedFields []metav1.ManagedFieldsEntry
	Annotations   map[string]string
	// OwnerReferences tell a controller's copy of its owner's
	// last-applied annotation from client-side apply's own.
	OwnerReferences []metav1.OwnerReference
	// Labels carry the GitOps tools' tracking labels.
	Labels map[string]string
}

// ObjectOf is what Check reads of an object's metadata, as a metadata
// list or informer gives it (apiVersion and kind are the resource's).
func ObjectOf(apiVersion, kind string, m *metav1.PartialObjectMetadata) Object {
	return Object{
		Ref: v1alpha1.ObjectRef{APIVersion: apiVersion, Kind: kind,
			Namespace: m.Namespace, Name: m.Name, UID: string(m.UID), ResourceVersion: m.ResourceVersion},
		ManagedFields: m.ManagedFields, Annotations: m.Annotations, Labels: m.Labels, OwnerReferences: m.OwnerReferences,
	}
}

// Check finds the problems of one object, in a stable order.
func Check(obj Object, o Options) []v1alpha1.Finding {
	c := checker{obj: obj, o: o}
	if len(obj.ManagedFields) == 0 {
		c.wiped()
		return c.out
	}
	c.sets = make([]*fieldpath.Set, len(obj.ManagedFields))
	for i, e := range obj.ManagedFields {
		set, err := ownership.DecodeEntry(e)
		if err != nil {
			set = &fieldpath.Set{}
		}
		c.sets[i] = set
	}
	c.under = map[string][]int{}
	lists := c.sharedLists()
	for i, e := range obj.ManagedFields {
		c.checkEntry(i, e, lists)
	}
	if s, ok := obj.Annotations[ownership.LastAppliedAnnotation]; ok && o.LastAppliedThreshold > 0 && len(s) > o.LastAppliedThreshold {
		c.add(v1alpha1.CodeLastAppliedSize, metav1.ManagedFieldsEntry{}, []pathlang.Path{pathlang.Path(ownership.LastAppliedPath)},
			fmt.Sprintf("the last-applied annotation is %d bytes, %d%% of the %d-byte limit on all annotations", len(s), len(s)*100/ownership.AnnotationLimit, ownership.AnnotationLimit),
			c.ssa([]string{"migrate"}, "--remove-last-applied"))
	}
	c.addLists(lists)
	c.updateAndApply()
	c.controllerScope()
	c.imperative()
	c.shared()
	return c.out
}

// checkEntry finds the problems of one managedFields entry: what it
// holds (a restart's stamp, a handover's), what it edits or drifts, and
// what kind of entry it is.
func (c *checker) checkEntry(i int, e metav1.ManagedFieldsEntry, lists listEdits) {
	set := c.sets[i]
	if set.Has(restartedAtPath) && e.Subresource == "" && !c.restartCopy(e) {
		c.add(v1alpha1.CodeRolloutRestart, e, []pathlang.Path{pathlang.Path(restartedAtPath)},
			fmt.Sprintf("%s stamped the pod template to restart the pods (kubectl rollout restart): the stamp stays and changes nothing; an applier made to own it would remove it at its next apply, which restarts every pod", describe(e)), nil)
	}
	held := e.Manager == ownership.HandoverManager && e.Operation == metav1.ManagedFieldsOperationApply
	if held && !set.Empty() {
		// Not drift: adopting these would undo the handover.
		c.add(v1alpha1.CodeHandoverHeld, e, leaves(set), fmt.Sprintf("%s holds %s at their values during a handover to a controller; nothing resets them, and it lets go when the handover runs again after the controller wrote them", describe(e), count(set)), nil)
	}
	if !held {
		c.checkEdits(i, e, lists)
	}
	c.checkKind(e, set)
}

// checkEdits finds what an entry that does not hold a handover's fields
// set by hand, or, with --expect-manager, drifts; and an Update whose
// every field the applier adopted since.
func (c *checker) checkEdits(i int, e metav1.ManagedFieldsEntry, lists listEdits) {
	edited := withoutRestart(c.sets[i])
	update := e.Operation == metav1.ManagedFieldsOperationUpdate
	edit := false // an Update the checks below would report but for adoption
	switch {
	case len(c.o.Expect) > 0:
		own := edited
		if update {
			own = without(edited, c.adoptedBy())
		}
		edit = update && e.Subresource == "" && !c.allowed(e.Manager)
		if c.drifts(e) && len(own) > 0 {
			c.addFixes(v1alpha1.CodeDrift, e, own, fmt.Sprintf("%s owns %s, and is not an expected manager", describe(e), countPaths(own)), scopeEntry)
		}
	case IsManual(e) && !ownership.IsCSAEntry(e):
		// (old kubectl's client-side apply wrote as "kubectl" Update:
		// that is csa-leftover below, whose fix is a migration)
		edit = e.Subresource == ""
		// The fields of shared list items are their own finding.
		if own := without(without(edited, c.appliedFields()), lists.covered(i)); len(own) > 0 {
			c.addFixes(v1alpha1.CodeManualEdit, e, own, fmt.Sprintf("%s owns %s set by hand", describe(e), countPaths(own)), scopeEntry)
		}
	}
	if edit && len(edited) > 0 && len(without(edited, c.adoptedBy())) == 0 {
		c.add(v1alpha1.CodeAdoptedEdit, e, edited, fmt.Sprintf("%s owns %s, and the applier applies every one of them since, with the same values: history, not an edit; releasing the entry changes no value", describe(e), countPaths(edited)), c.release(e, nil))
	}
}

// checkKind finds what kind of entry e is, when that is a problem: a
// client-side apply leftover, a fold of old managers, an API version no
// longer served, a user agent for a name, an entry that owns nothing.
func (c *checker) checkKind(e metav1.ManagedFieldsEntry, set *fieldpath.Set) {
	obj, o := c.obj, c.o
	switch {
	case ownership.IsCSALeftover(e, obj.Ref.Kind, obj.Annotations, obj.OwnerReferences):
		c.add(v1alpha1.CodeCSALeftover, e, nil, fmt.Sprintf("%s is a client-side apply leftover owning %s: the next server-side apply can't remove them", describe(e), count(set)), c.ssa([]string{"migrate"}))
	case e.Manager == ownership.BeforeFirstApply && !set.Empty():
		c.add(v1alpha1.CodeBeforeFirstApply, e, leaves(set), fmt.Sprintf("%s owns %s nobody declared", ownership.BeforeFirstApply, count(set)), c.ssa([]string{"migrate", "fold"}, "--field-manager", c.applier()))
	case e.Manager == ownership.AncientChanges && !set.Empty():
		c.add(v1alpha1.CodeAncientChanges, e, leaves(set), fmt.Sprintf("%s owns %s of merged old Update managers", ownership.AncientChanges, count(set)), c.ssa([]string{"migrate", "fold"}, "--field-manager", c.applier()))
	}
	if o.Served != nil {
		if gv, err := schema.ParseGroupVersion(e.APIVersion); err == nil && e.APIVersion != "" && !o.Served(gv.WithKind(obj.Ref.Kind)) {
			c.add(v1alpha1.CodeUnservedAPIVersion, e, nil, fmt.Sprintf("%s was recorded at %s, which the server no longer serves: the apiserver drops it, and its ownership, on the next write", describe(e), e.APIVersion), c.ssa([]string{"migrate", "apiversions"}))
		}
	}
	if ownership.IsGenericManager(e.Manager) {
		c.add(v1alpha1.CodeGenericManager, e, nil, fmt.Sprintf("%s is a client's user agent, not a chosen name: writers under it can't be told apart; give the client a field manager", describe(e)), c.ssa([]string{"migrate", "rename"}, "--from", e.Manager, "--field-manager", "NEW-NAME"))
	}
	if set.Empty() {
		c.add(v1alpha1.CodeEmptyManager, e, nil, fmt.Sprintf("%s owns nothing", describe(e)), c.ssa([]string{"migrate", "release"}, "--from", e.Manager))
	}
}

type checker struct {
	obj Object
	o   Options
	out []v1alpha1.Finding
	// sets are the entries' fields, decoded once.
	sets []*fieldpath.Set
	// applied and expected are the fields of the appliers (isApplier)
	// and of the expected ones, when first needed.
	applied, expected *fieldpath.Set
	// under caches appliersUnder by parent path.
	under map[string][]int
	// subresourceWriters are the managers with an entry of a
	// subresource, read once.
	subresourceWriters map[string]bool
}

// appliedFields is what the appliers apply: a field an Update entry
// shares with one holds the value the applier declares (an Update that
// changed it would have taken it from the applier), so a hand edit the
// applier applied since is no edit any more.
func (c *checker) appliedFields() *fieldpath.Set {
	if c.applied == nil {
		c.applied = c.union(isApplier)
	}
	return c.applied
}

// adoptedBy is the fields whose edits are adopted: those the appliers
// apply, the expected ones with --expect-manager (another applier's
// fields are drift too).
func (c *checker) adoptedBy() *fieldpath.Set {
	if len(c.o.Expect) == 0 {
		return c.appliedFields()
	}
	if c.expected == nil {
		c.expected = c.union(func(e metav1.ManagedFieldsEntry) bool { return isApplier(e) && matchesAny(c.o.Expect, e.Manager) })
	}
	return c.expected
}

// hasApplier tells whether anyone applies the object.
func (c *checker) hasApplier() bool { return slices.ContainsFunc(c.obj.ManagedFields, isApplier) }

// add adds a finding when its code is enabled, and returns it for more
// (nil when it is not).
func (c *checker) add(code v1alpha1.Code, e metav1.ManagedFieldsEntry, paths []pathlang.Path, msg string, fix remedy.Command) *v1alpha1.Finding {
	if !c.o.Enabled(code) {
		return nil
	}
	if paths == nil {
		paths = []pathlang.Path{}
	}
	c.out = append(c.out, v1alpha1.Finding{
		Cluster: c.o.Cluster, Object: c.obj.Ref, Code: code, Severity: SeverityOf(code),
		Manager: e.Manager, Operation: v1alpha1.Operation(e.Operation), Subresource: v1alpha1.Subresource(e.Subresource),
		Paths: paths, Message: msg, Fix: fix,
	})
	return &c.out[len(c.out)-1]
}

// ssa is kubectl ssa SUB on the object with the cluster's flags, then
// rest: the shape of every command kubectl-ssa suggests.
func (c *checker) ssa(sub []string, rest ...string) remedy.Command {
	t := remedy.Target{ResourceArg: c.obj.Ref.ResourceArg(), Namespace: c.obj.Ref.Namespace, ClusterFlags: c.o.ClusterFlags}
	return t.SSA(sub, rest...)
}

var restartedAtPath = ownership.RestartedAtPath

// withoutRestart is the leaves of set but rollout restart's stamp and the
// maps above it (an Update entry owns the annotations map it created).
func withoutRestart(set *fieldpath.Set) []pathlang.Path {
	out := []pathlang.Path{}
	for _, p := range leaves(set) {
		e := fieldpath.Path(p)
		if len(e) <= len(restartedAtPath) && restartedAtPath[:len(e)].Equals(e) {
			continue
		}
		out = append(out, p)
	}
	return out
}

// restartCopy tells whether an entry's restart stamp is a controller's
// copy of its owner's (the deployment controller's ReplicaSet of a
// restarted Deployment): the restart is reported once, on the object it
// was made on.
func (c *checker) restartCopy(e metav1.ManagedFieldsEntry) bool {
	return isCopy(c.obj) && tools.IsController(v1alpha1.Owner{Manager: e.Manager, Operation: v1alpha1.Operation(e.Operation)})
}

// fixScope says what the fixes of a finding move: the whole entry, or
// the finding's fields only.
type fixScope int

const (
	// scopeEntry: the entry's fields, all of them (migrate rename, or
	// handover release --all).
	scopeEntry fixScope = iota
	// scopeFields: the finding's fields, one by one (handover --field).
	scopeFields
	// scopeItems: the finding's list items and fields, to the applier
	// only: released, an item a hand edit made would stay next to the
	// applier's own at its next apply.
	scopeItems
)

// addFixes adds a finding on fields someone set outside the declared
// manifests, with its fixes: adopt (the applier takes them; its next
// apply returns them to the declared state), the default when the object
// has one applier, which it may pick among the expected managers; and
// forget (release; the values stay until an apply that sets them).
func (c *checker) addFixes(code v1alpha1.Code, e metav1.ManagedFieldsEntry, paths []pathlang.Path, msg string, scope fixScope) *v1alpha1.Finding {
	release := c.release(e, nil)
	if scope != scopeEntry {
		release = c.release(e, paths)
	}
	forget := v1alpha1.Fix{Mode: v1alpha1.FixForget, Command: release,
		Summary: fmt.Sprintf("%s lets go of the fields; their values stay as they are, owned by nobody, until an apply whose manifest sets them: it then sets its value with no conflict (adopt, into the manifest, keeps an edit)", describe(e))}
	var fixes []v1alpha1.Fix
	applier := c.adopter()
	if applier == "" && scope == scopeItems {
		applier = "APPLIER" // (for the user to name: several apply the object)
	}
	if applier != "" {
		rolls := ""
		for _, p := range paths {
			if ownership.InPodTemplate(fieldpath.Path(p)) {
				rolls = "; reverting the pod template rolls the pods"
				break
			}
		}
		cmd := c.adopt(e, applier, paths)
		if scope != scopeEntry {
			cmd = c.handTo(e, applier, paths)
		}
		fixes = append(fixes, v1alpha1.Fix{Mode: v1alpha1.FixAdopt, Command: cmd,
			Summary: fmt.Sprintf("%q takes the fields at their current values; its next apply keeps or reverts them as its manifest says (the declared state)%s", applier, rolls)})
	}
	if scope != scopeItems {
		fixes = append(fixes, forget)
		if c.o.Fix == v1alpha1.FixForget {
			fixes = append([]v1alpha1.Fix{forget}, fixes[:len(fixes)-1]...)
		}
	}
	f := c.add(code, e, paths, msg, fixes[0].Command)
	if f != nil {
		f.Fixes = fixes
	}
	return f
}

// adopter is the applier that should take edited fields: the object's
// one Apply manager of the main resource (among the expected ones, when
// expected managers are given); or, when the edits took all of the
// applier's fields and with them its entry, the one expected manager
// named without a glob; "" when there is none or several.
func (c *checker) adopter() string {
	name := ""
	for _, e := range c.obj.ManagedFields {
		if e.Operation != metav1.ManagedFieldsOperationApply || e.Subresource != "" {
			continue
		}
		if len(c.o.Expect) > 0 && !matchesAny(c.o.Expect, e.Manager) {
			continue
		}
		if name != "" && name != e.Manager {
			return "" // several: the user picks
		}
		name = e.Manager
	}
	if name == "" && len(c.o.Expect) == 1 && !strings.ContainsAny(c.o.Expect[0], "*?[") {
		name = c.o.Expect[0]
	}
	return name
}

func matchesAny(globs []string, name string) bool {
	for _, g := range globs {
		if pathlang.Glob(g, name) {
			return true
		}
	}
	return false
}

// adopt is the command that gives an entry's fields to the applier:
// migrate rename folds an entry of the main resource into the applier's
// entry; a subresource's entry, or one holding rollout restart's stamp
// (which the applier's next apply would remove, restarting every pod), is
// handed over field by field.
func (c *checker) adopt(e metav1.ManagedFieldsEntry, applier string, paths []pathlang.Path) remedy.Command {
	if s, err := ownership.DecodeEntry(e); e.Subresource == "" && err == nil && !s.Has(restartedAtPath) {
		return c.ssa([]string{"migrate", "rename"}, "--from", e.Manager, "--field-manager", applier)
	}
	return c.handTo(e, applier, paths)
}

// handTo hands the paths of an entry over to the applier.
func (c *checker) handTo(e metav1.ManagedFieldsEntry, applier string, paths []pathlang.Path) remedy.Command {
	args := append(fieldFlags(paths), c.fromFlags(e)...)
	return c.ssa([]string{"handover"}, append(args, "--to", applier, "--mode", "applier")...)
}

// release is the command that takes an entry's fields away from it: the
// paths, or all of them when paths is nil.
func (c *checker) release(e metav1.ManagedFieldsEntry, paths []pathlang.Path) remedy.Command {
	args := c.fromFlags(e)
	if paths == nil {
		args = append(args, "--all")
	}
	return c.ssa([]string{"handover", "release"}, append(args, fieldFlags(paths)...)...)
}

// fromFlags name an entry as a handover's source: its manager, and its
// subresource when the manager writes through several.
func (c *checker) fromFlags(e metav1.ManagedFieldsEntry) []string {
	args := []string{"--from", e.Manager}
	if e.Subresource != "" {
		args = append(args, "--from-subresource", e.Subresource)
	} else if c.hasSubresourceEntry(e.Manager) {
		args = append(args, "--from-subresource", "none")
	}
	return args
}

func fieldFlags(paths []pathlang.Path) []string {
	var out []string
	for _, p := range paths {
		out = append(out, "--field", p.String())
	}
	return out
}

func (c *checker) hasSubresourceEntry(manager string) bool {
	if c.subresourceWriters == nil {
		c.subresourceWriters = map[string]bool{}
		for _, e := range c.obj.ManagedFields {
			if e.Subresource != "" {
				c.subresourceWriters[e.Manager] = true
			}
		}
	}
	return c.subresourceWriters[manager]
}

// drifts tells whether an entry's fields are drift with --expect-manager:
// its manager is neither expected nor allowed, and it wrote the main
// resource, or /scale by hand (kubectl scale, k9s, Lens: the replicas in
// git are no longer the object's). A controller's scaling (the HPA, KEDA,
// any autoscaler) and other subresources (status) are theirs to write.
func (c *checker) drifts(e metav1.ManagedFieldsEntry) bool {
	if c.allowed(e.Manager) {
		return false
	}
	switch v1alpha1.Subresource(e.Subresource) {
	case v1alpha1.SubresourceNone:
		return true
	case v1alpha1.SubresourceScale:
		return !tools.IsController(v1alpha1.Owner{Manager: e.Manager, Operation: v1alpha1.Operation(e.Operation), Subresource: v1alpha1.SubresourceScale})
	}
	return false
}

func (c *checker) allowed(manager string) bool {
	for _, globs := range [][]string{c.o.Expect, c.o.Allow, ownership.SystemManagers} {
		for _, g := range globs {
			if pathlang.Glob(g, manager) {
				return true
			}
		}
	}
	return false
}

// applier is the manager that should take history managers' fields: the
// object's one Apply manager, or kubectl's default.
// applier is the one applier of the object, which a fold gives the
// history managers' fields to; APPLIER (for the user to name) when there
// are none or several: folding into a made-up applier would let its next
// apply delete fields nobody declared.
func (c *checker) applier() string {
	name := ""
	for _, e := range c.obj.ManagedFields {
		if e.Operation == metav1.ManagedFieldsOperationApply && e.Subresource == "" {
			if name != "" && name != e.Manager {
				return "APPLIER"
			}
			name = e.Manager
		}
	}
	if name == "" {
		return "APPLIER"
	}
	return name
}

// shared reports the fields two or more Apply entries of the main
// resource own, once per group of co-owners.
func (c *checker) shared() {
	sets := c.sets
	var appliers []int
	for i, e := range c.obj.ManagedFields {
		if e.Operation == metav1.ManagedFieldsOperationApply && e.Subresource == "" {
			appliers = append(appliers, i)
		}
	}
	if len(appliers) < 2 {
		return
	}
	groups := map[string][]pathlang.Path{}
	var order []string
	seen := fieldpath.NewSet()
	applierSets := make([]*fieldpath.Set, len(sets))
	for _, i := range appliers {
		applierSets[i] = sets[i]
	}
	index := ownership.IndexSets(c.obj.ManagedFields, applierSets)
	for _, i := range appliers {
		sets[i].Leaves().Iterate(func(p fieldpath.Path) {
			if seen.Has(p) || isKeyField(p) {
				return
			}
			var owners []string
			for _, e := range index.Owners(p) {
				owners = append(owners, strings.ReplaceAll(e.Manager, "\x00", ""))
			}
			if len(owners) < 2 {
				return
			}
			sort.Strings(owners)
			seen.Insert(p.Copy())
			key := strings.Join(owners, "\x00")
			if _, ok := groups[key]; !ok {
				order = append(order, key)
			}
			groups[key] = append(groups[key], pathlang.Path(p.Copy()))
		})
	}
	sort.Strings(order)
	for _, key := range order {
		owners := strings.Split(key, "\x00")
		paths := groups[key]
		sort.Slice(paths, func(i, j int) bool { return fieldpath.Path(paths[i]).Compare(fieldpath.Path(paths[j])) < 0 })
		last := owners[len(owners)-1]
		f := c.add(v1alpha1.CodeSharedAppliers, metav1.ManagedFieldsEntry{Manager: owners[0], Operation: metav1.ManagedFieldsOperationApply}, paths,
			fmt.Sprintf("%d fields are applied by %s: each apply of one can change what the other declared, and removing a field takes all of them", len(paths), strings.Join(owners, " and ")),
			c.release(metav1.ManagedFieldsEntry{Manager: last, Operation: metav1.ManagedFieldsOperationApply}, paths))
		if f != nil {
			f.SharedWith = owners[1:]
		}
	}
}

func leaves(set *fieldpath.Set) []pathlang.Path {
	out := []pathlang.Path{}
	set.Leaves().Iterate(func(p fieldpath.Path) {
		if !isKeyField(p) {
			out = append(out, pathlang.Path(p.Copy()))
		}
	})
	return out
}

// isKeyField tells whether a path is a key field of a list item
// (.spec.containers[name="app"].name): whoever owns the item owns it, so
// it says nothing of its own.
func isKeyField(p fieldpath.Path) bool {
	if len(p) < 2 || p[len(p)-1].FieldName == nil || p[len(p)-2].Key == nil {
		return false
	}
	for _, f := range *p[len(p)-2].Key {
		if f.Name == *p[len(p)-1].FieldName {
			return true
		}
	}
	return false
}

func countPaths(paths []pathlang.Path) string {
	if len(paths) != 1 {
		return fmt.Sprintf("%d fields", len(paths))
	}
	return "1 field"
}

func count(set *fieldpath.Set) string {
	if n := len(leaves(set)); n != 1 {
		return fmt.Sprintf("%d fields", n)
	}
	return "1 field"
}

func describe(e metav1.ManagedFieldsEntry) string {
	s := fmt.Sprintf("%q (%s", e.Manager, e.Operation)
	if e.Subresource != "" {
		s += " /" + e.Subresource
	}
	return s + ")"
}
