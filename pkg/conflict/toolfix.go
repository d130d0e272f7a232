package conflict

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/pathlang"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/remedy"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/tools"
)

// toolConflict is one conflicting path, with every owner of it.
type toolConflict struct {
	path   pathlang.Path
	owners []v1alpha1.Conflict
}

// byPath groups conflicts by path, in order.
func byPath(conflicts []v1alpha1.Conflict) []toolConflict {
	var out []toolConflict
	at := map[string]int{}
	for _, cf := range conflicts {
		key := cf.Path.APIServerString()
		if i, ok := at[key]; ok {
			out[i].owners = append(out[i].owners, cf)
			continue
		}
		at[key] = len(out)
		out = append(out, toolConflict{path: cf.Path, owners: []v1alpha1.Conflict{cf}})
	}
	return out
}

// toolFixes are the ways out of r's conflicts written as settings of the
// tool that applies. Each one leaves the fields to their owners with
// their live values: none resets a value, except Helm's
// --force-conflicts, which says so.
func toolFixes(r *Simulation, t remedy.Target) []remedy.Remedy {
	tool := tools.ToolFor(t)
	if tool == "" || len(r.Conflicts) == 0 || r.Subresource != "" {
		// The tools apply objects, not their subresources.
		return nil
	}
	f := fixer{r: r, t: t, paths: byPath(r.Conflicts)}
	f.gvk = schema.FromAPIVersionAndKind(r.Object.APIVersion, r.Object.Kind)
	f.name = ownership.ObjectName(r.Object.Kind, r.Object.Namespace, r.Object.Name)
	f.applier, _ = tools.WriterOf(t.FieldManager, r.ApplierOperation)
	switch tool {
	case remedy.ArgoCD:
		return []remedy.Remedy{f.argoCD()}
	case remedy.Flux:
		var out []remedy.Remedy
		if t.FieldManager != tools.FluxHelm {
			out = append(out, f.kustomization())
		}
		if t.FieldManager != tools.FluxKustomize {
			out = append(out, f.helmRelease())
		}
		return out
	case remedy.Helm:
		return append(f.chart(), f.helmForce())
	}
	return nil
}

type fixer struct {
	r       *Simulation
	t       remedy.Target
	paths   []toolConflict
	gvk     schema.GroupVersionKind
	name    string      // Kind/namespace/name
	applier tools.Known // as it writes the object now (Report.ApplierOperation)
}

// owners names the owners of the conflicting paths: "a" and "b".
func (f fixer) owners() string {
	var names []string
	seen := map[string]bool{}
	for _, p := range f.paths {
		for _, cf := range p.owners {
			if !seen[cf.Manager] {
				seen[cf.Manager] = true
				names = append(names, strconv.Quote(cf.Manager))
			}
		}
	}
	if len(names) > 1 {
		return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
	}
	return strings.Join(names, "")
}

// forcedNote says what the applier does without the fix, as it writes
// the object now: a forced apply does not fail, it takes the fields; a
// client-side apply does not fail either, its patch sets them.
func (f fixer) forcedNote(tool string) string {
	switch {
	case f.applier.ClientSide:
		return fmt.Sprintf(" Without it, %s's next write is client-side, as its last (%q has an Update entry, no Apply one): it does not fail on these conflicts either, its patch sets the manifest's values over those of %s, which they may write back.", tool, f.t.FieldManager, f.owners())
	case f.applier.Forces:
		return fmt.Sprintf(" Without it, %s does not fail on these conflicts: it forces its apply, taking the fields from %s and setting the manifest's values, which their owners may write back.", tool, f.owners())
	}
	return ""
}

// ownUpdateEntry are the conflicting paths that the applier's own
// Update entry holds: a switch to server-side apply that migrates that
// entry (csaupgrade, as Helm's and Argo CD's do) gives them to the
// applier's Apply entry, and an apply that leaves them out then deletes
// them.
func (f fixer) ownUpdateEntry() []string {
	var out []string
	for _, p := range f.paths {
		for _, cf := range p.owners {
			if cf.Manager == f.t.FieldManager && cf.Operation == v1alpha1.OperationUpdate && cf.Subresource == "" {
				out = append(out, p.path.String())
				break
			}
		}
	}
	return out
}

// ownEntryNote warns of ownUpdateEntry's paths.
func (f fixer) ownEntryNote() string {
	own := f.ownUpdateEntry()
	if len(own) == 0 {
		return ""
	}
	return fmt.Sprintf(" %q's own client-side entry holds %s: the switch moves it into the server-side entry, and an apply that leaves them out then deletes them: hand them over to their other owner first (kubectl ssa handover).", f.t.FieldManager, strings.Join(own, ", "))
}

func (f fixer) known(cf v1alpha1.Conflict) tools.Known {
	k, _ := tools.Lookup(cf.Owner(), cf.Path.APIServerString())
	return k
}

func marshalSnippet(v any) string {
	b, err := yaml.Marshal(v)
	if err != nil {
		// Maps of strings and lists marshal.
		panic(err)
	}
	return string(b)
}

// argoCDMigrationManager is the Application annotation that names the
// client-side manager Argo CD's switch to server-side apply migrates
// (argo-cd common/common.go AnnotationClientSideApplyMigrationManager,
// docs/user-guide/sync-options.md "Client-Side Apply Migration").
const argoCDMigrationManager = "argocd.argoproj.io/client-side-apply-migration-manager"

// argoCD is an Application's ignoreDifferences entry for the object: the
// controllers that own the fields by name (managedFieldsManagers: what
// they write next is theirs too), the other fields by jq path (a UI or
// kubectl edit: only these fields). RespectIgnoreDifferences=true makes
// the sync copy the live values of the ignored fields into what it
// applies (argo-cd controller/sync.go normalizeTargetResources), so the
// applier co-owns them at their live values: no conflict, no change.
func (f fixer) argoCD() remedy.Remedy {
	entry := map[string]any{"group": f.gvk.Group, "kind": f.gvk.Kind, "name": f.r.Object.Name}
	if f.r.Object.Namespace != "" {
		entry["namespace"] = f.r.Object.Namespace
	}
	var managers, jq []string
	ui := false
	for _, p := range f.paths {
		controllers := true
		for _, cf := range p.owners {
			ui = ui || cf.Manager == tools.ArgoCDUI
			controllers = controllers && f.known(cf).Controller
		}
		if !controllers {
			jq = append(jq, pathlang.JQ(p.path.Elements()))
			continue
		}
		for _, cf := range p.owners {
			if !containsString(managers, cf.Manager) {
				managers = append(managers, cf.Manager)
			}
		}
	}
	if len(managers) > 0 {
		entry["managedFieldsManagers"] = managers
	}
	if len(jq) > 0 {
		entry["jqPathExpressions"] = jq
	}
	snippet := map[string]any{"spec": map[string]any{
		"ignoreDifferences": []any{entry},
		"syncPolicy":        map[string]any{"syncOptions": []any{"ServerSideApply=true", "RespectIgnoreDifferences=true"}},
	}}
	// Pasted over an Application's own lists, the snippet's would replace
	// them (and with them its other sync options): it says to add entries.
	summary := fmt.Sprintf("In Argo CD, leave them to %s: add this to the Application that syncs %s; where it already has an ignoreDifferences or a syncOptions list, add these entries to it (the ignoreDifferences entry, and the two syncOptions entries ServerSideApply=true and RespectIgnoreDifferences=true), keeping the ones it has. ignoreDifferences takes them out of the diff; RespectIgnoreDifferences=true makes each sync of the existing object send their live values instead of git's (co-owned, unchanged).", f.owners(), f.name)
	summary += f.forcedNote("Argo CD's sync")
	if f.applier.ClientSide {
		// The client-side entry outlives the switch unless the migration
		// names it: Argo CD migrates "kubectl-client-side-apply" by
		// default (argo-cd gitops-engine/pkg/sync/common/types.go
		// DefaultClientSideApplyMigrationManager; controller/sync.go reads
		// the annotation that names another).
		snippet["metadata"] = map[string]any{"annotations": map[string]any{argoCDMigrationManager: f.t.FieldManager}}
		summary += fmt.Sprintf(" Argo CD syncs %s client-side now: ServerSideApply=true switches it to server-side apply, where fields left to their owners stay theirs: keep it with the rest (a client-side sync deletes whatever the last-applied annotation holds and git drops, whoever owns it now). The annotation has the first server-side sync move %q's client-side entry into its server-side one (Argo CD 3.3 or later; it migrates only \"kubectl-client-side-apply\" otherwise), so that later removals from git are not kept by the old entry.", f.name, f.t.FieldManager)
		summary += f.ownEntryNote()
	}
	if ui {
		summary += " This keeps the edit made in Argo CD's UI; to have git win instead, sync without it: Argo CD's forced apply sets git's values and the UI's are lost."
	}
	return remedy.Remedy{Kind: remedy.ArgoCDIgnoreDifferences, Tool: remedy.ArgoCD, Summary: summary, Paths: f.uniquePaths(),
		Into:    &remedy.Into{APIVersion: "argoproj.io/v1alpha1", Kind: "Application", Which: "the Application that syncs " + f.name, Edit: remedy.Merge},
		Snippet: marshalSnippet(snippet)}
}

func containsString(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

func (f fixer) uniquePaths() []pathlang.Path {
	out := make([]pathlang.Path, len(f.paths))
	for i, p := range f.paths {
		out[i] = p.path
	}
	return out
}

// pointers are the conflicting paths as JSON Pointers into the manifest
// (Flux patches the object it applies at them, and compares the live
// object at them). A path whose item has another index in the live object
// is left out: the pointer would name two different items, and Flux would
// copy one item's live value into the other.
func (f fixer) pointers() (ptrs []string, paths []pathlang.Path, left []string) {
	var applied, live any
	if f.r.Applied != nil {
		applied = f.r.Applied.Object
	}
	if f.r.Live != nil {
		live = f.r.Live.Object
	}
	for _, p := range f.paths {
		ptr, ok := pathlang.JSONPointer(applied, p.path.Elements())
		if l, inLive := pathlang.JSONPointer(live, p.path.Elements()); !ok || !inLive || l != ptr {
			left = append(left, p.path.String())
			continue
		}
		ptrs = append(ptrs, ptr)
		paths = append(paths, p.path)
	}
	return ptrs, paths, left
}

// pointerNote says which paths the pointers leave out.
func pointerNote(left []string) string {
	if len(left) == 0 {
		return ""
	}
	return " Left out: " + strings.Join(left, ", ") + ", whose list item has another index in the manifest than in the live object (a pointer names an item by index): list the items in the same order, then run this again."
}

// fluxTarget is a Flux ignore rule's target: its name and namespace are
// anchored regular expressions (fluxcd/pkg ssa/jsondiff/selector.go), so
// they are quoted; an empty group would match every group.
func (f fixer) fluxTarget(namespace bool) map[string]any {
	target := map[string]any{"kind": f.gvk.Kind, "name": regexp.QuoteMeta(f.r.Object.Name)}
	if f.gvk.Group != "" {
		target["group"] = regexp.QuoteMeta(f.gvk.Group)
	}
	if namespace && f.r.Object.Namespace != "" {
		target["namespace"] = regexp.QuoteMeta(f.r.Object.Namespace)
	}
	return target
}

// foldedByFlux are the conflicts' owners that Flux folds into its own
// entry before it applies (tools.FoldedByFlux): there is no conflict
// with them, Flux's apply overwrites their values.
func (f fixer) foldedByFlux() []string {
	var out []string
	for _, p := range f.paths {
		for _, cf := range p.owners {
			if cf.Subresource == "" && tools.FoldedByFlux(cf.Manager) && !containsString(out, strconv.Quote(cf.Manager)) {
				out = append(out, strconv.Quote(cf.Manager))
			}
		}
	}
	return out
}

// kustomization is a Kustomization's spec.ignore rule for the object
// (kustomize-controller v1.9.0 and later): at each apply of the existing
// object, Flux leaves an ignored field out of what it applies when
// another manager applies it, and copies its live value in otherwise
// (fluxcd/pkg ssa/manager_apply.go computeDriftedPaths): no conflict, no
// change.
func (f fixer) kustomization() remedy.Remedy {
	ptrs, paths, left := f.pointers()
	summary := fmt.Sprintf("In Flux, leave them to %s: add this ignore rule to the Kustomization that applies %s (kustomize-controller v1.9.0 or later). Each apply then leaves out the fields another manager applies and sends the live values of those it updates: unchanged, and not corrected as drift.", f.owners(), f.name)
	summary += f.forcedNote("Flux")
	if f.r.ApplierOperation == metav1.ManagedFieldsOperationUpdate && f.t.FieldManager == tools.FluxKustomize {
		// kustomize-controller folds its own Update entry before applying
		// (kustomize-controller internal/controller/kustomization_controller.go).
		summary += fmt.Sprintf(" %q has an Update entry, no Apply one (written before it applied server-side): its next apply is server-side all the same, and first folds that entry into its own.", f.t.FieldManager)
	}
	if folded := f.foldedByFlux(); len(folded) > 0 {
		summary += " Flux folds " + strings.Join(folded, ", ") + " into its own entry before applying: without this rule it overwrites their values with no conflict."
	}
	rm := remedy.Remedy{Kind: remedy.FluxKustomizationIgnore, Tool: remedy.Flux, Summary: summary + pointerNote(left), Paths: paths}
	if len(ptrs) > 0 {
		rm.Into = &remedy.Into{APIVersion: "kustomize.toolkit.fluxcd.io/v1", Kind: "Kustomization", Which: "the Kustomization that applies " + f.name, Edit: remedy.Merge}
		rm.Snippet = marshalSnippet(map[string]any{"spec": map[string]any{
			"ignore": []any{map[string]any{"paths": ptrs, "target": f.fluxTarget(true)}},
		}})
	}
	return rm
}

// helmRelease is a HelmRelease's drift ignore rule, which keeps drift
// detection and correction off the fields, and a post-renderer that
// removes them from the rendered manifest: helm-controller's upgrades
// force their applies (internal/action/upgrade.go) and ignore rules only
// govern drift, so the rendered manifest must not carry them.
func (f fixer) helmRelease() remedy.Remedy {
	ptrs, paths, left := f.pointers()
	summary := fmt.Sprintf("In Flux, leave them to %s: add this to the HelmRelease that installs %s. The post-renderer removes them from the rendered manifest, so upgrades leave them to their owners (unchanged: they own them); driftDetection.ignore keeps drift correction off them. Drop the patch if the chart stops rendering them (a remove of a missing field fails).", f.owners(), f.name)
	summary += f.forcedNote("helm-controller") + f.upgradeNote()
	rm := remedy.Remedy{Kind: remedy.FluxHelmReleaseIgnore, Tool: remedy.Flux, Summary: summary + pointerNote(left), Paths: paths}
	if len(ptrs) == 0 {
		return rm
	}
	var ops []string
	for _, p := range sortedForRemoval(ptrs) {
		ops = append(ops, "- op: remove\n  path: "+p+"\n")
	}
	rm.Into = &remedy.Into{APIVersion: "helm.toolkit.fluxcd.io/v2", Kind: "HelmRelease", Which: "the HelmRelease that installs " + f.name, Edit: remedy.Merge}
	spec := map[string]any{
		"driftDetection": map[string]any{"ignore": []any{map[string]any{"paths": ptrs, "target": f.fluxTarget(true)}}},
		"postRenderers": []any{map[string]any{"kustomize": map[string]any{
			"patches": []any{map[string]any{"target": f.fluxTarget(false), "patch": strings.Join(ops, "")}},
		}}},
	}
	if f.r.ApplierOperation != metav1.ManagedFieldsOperationApply {
		// The post-renderer is safe on server-side upgrades only: the
		// setting comes with it unless the release is known to apply
		// server-side ("enabled", not "true": the API's enum,
		// helm-controller api/v2 ServerSideApplyMode).
		spec["upgrade"] = map[string]any{"serverSideApply": "enabled"}
	}
	rm.Snippet = marshalSnippet(map[string]any{"spec": spec})
	return rm
}

// upgradeNote says what helm-controller's next upgrade does with the
// post-renderer, as it writes the object now. Its upgrades follow
// spec.upgrade.serverSideApply: "enabled", "disabled", or "auto" (the
// default: the release's last revision's method), and force conflicts
// only server-side (helm-controller api/v2/helmrelease_types.go,
// internal/action/upgrade.go). A client-side upgrade is Helm's
// three-way merge: it deletes what the last revision rendered and this
// render drops, whoever owns it now, so a post-renderer that removes a
// field the last revision rendered deletes it (.spec.replicas goes back
// to its default). Helm's first server-side upgrade of a client-side
// release moves its client-side entry into its server-side one
// (helm pkg/action/upgrade.go upgradeClientSideFieldManager).
func (f fixer) upgradeNote() string {
	who := strconv.Quote(f.t.FieldManager)
	switch f.r.ApplierOperation {
	case metav1.ManagedFieldsOperationApply:
		return fmt.Sprintf(" The release is upgraded server-side (%s has an Apply entry; spec.upgrade.serverSideApply \"auto\", the default, keeps the last revision's method): fields the render leaves out stay to their owners.", who)
	case metav1.ManagedFieldsOperationUpdate:
		return fmt.Sprintf(" The release is upgraded client-side now (%s has an Update entry, no Apply one: spec.upgrade.serverSideApply is \"disabled\", or \"auto\" on a release applied client-side). A client-side upgrade deletes what the last revision rendered and this render drops, whoever owns it now: with the post-renderer alone the next upgrade would delete these fields (.spec.replicas goes back to its default). spec.upgrade.serverSideApply: enabled, in the snippet, makes the upgrades server-side (helm-controller then forces its conflicts, and Helm first moves its client-side entry into its server-side one): keep the two together.", who) + f.ownEntryNote()
	}
	return " If the release is upgraded client-side (spec.upgrade.serverSideApply \"disabled\", or \"auto\" on a release applied client-side), a client-side upgrade deletes what the last revision rendered and this render drops, whoever owns it: spec.upgrade.serverSideApply: enabled, in the snippet, keeps the post-renderer safe (no change for a release upgraded server-side)."
}

// sortedForRemoval orders JSON Pointers so that removing them in turn
// never shifts an index a later one uses: higher indexes of a list first.
func sortedForRemoval(ptrs []string) []string {
	out := append([]string{}, ptrs...)
	sort.SliceStable(out, func(i, j int) bool {
		a, b := strings.Split(out[i], "/"), strings.Split(out[j], "/")
		for k := 0; k < len(a) && k < len(b); k++ {
			if a[k] == b[k] {
				continue
			}
			x, errA := strconv.Atoi(a[k])
			y, errB := strconv.Atoi(b[k])
			if errA == nil && errB == nil {
				return x > y
			}
			return a[k] < b[k]
		}
		return len(a) > len(b)
	})
	return out
}

// chart is the change to the chart that leaves the fields to their
// owners, for the conflicts whose fix in a chart is known: .spec.replicas
// of an object an autoscaler scales, and a caBundle an injector writes.
// The chart stops rendering them; they are not the applier's (another
// manager holds them with another value), so the upgrade leaves them as
// they are.
func (f fixer) chart() []remedy.Remedy {
	var out []remedy.Remedy
	for _, p := range f.paths {
		path := p.path.APIServerString()
		owner := p.owners[0]
		switch {
		case path == ".spec.replicas" && f.autoscaled(p):
			out = append(out, remedy.Remedy{Kind: remedy.HelmChart, Tool: remedy.Helm, Paths: []pathlang.Path{p.path},
				Summary: fmt.Sprintf("In the chart, stop rendering .spec.replicas while an autoscaler scales %s, as `helm create`'s template does, and set autoscaling.enabled=true in the release's values (the chart's own value name may differ; in helm create's chart it also renders the HorizontalPodAutoscaler): the upgrade then leaves replicas to %q, unchanged.", f.name, owner.Manager),
				Into:    &remedy.Into{File: "templates/", Which: "the chart's template that renders " + f.name, Edit: remedy.Replace},
				Snippet: "spec:\n  {{- if not .Values.autoscaling.enabled }}\n  replicas: {{ .Values.replicaCount }}\n  {{- end }}\n"})
		case strings.HasSuffix(path, ".caBundle"):
			out = append(out, remedy.Remedy{Kind: remedy.HelmChart, Tool: remedy.Helm, Paths: []pathlang.Path{p.path},
				Summary: fmt.Sprintf("In the chart, stop rendering %s in the template of %s: %q injects it (keep what tells it to, e.g. the cert-manager.io/inject-ca-from annotation); the upgrade then leaves it to its owner, unchanged.", p.path.String(), f.name, owner.Manager),
				Into:    &remedy.Into{File: "templates/", Which: "the chart's template that renders " + f.name, Edit: remedy.Remove},
				Snippet: skeleton(p.path.Elements(), "...")})
		}
	}
	return out
}

// autoscaled tells whether .spec.replicas is an autoscaler's: the HPA's
// controller owns it, or the report found an HPA scaling the object.
func (f fixer) autoscaled(p toolConflict) bool {
	if len(f.r.Autoscalers) > 0 {
		return true
	}
	for _, cf := range p.owners {
		if cf.Manager == v1alpha1.AutoscalerController {
			return true
		}
	}
	return false
}

// skeleton is the YAML that leads to a path, ending with leaf: list
// items show their key fields.
func skeleton(p fieldpath.Path, leaf string) string {
	var b strings.Builder
	indent := ""
	item := false // the next field is the first of a list item
	for i, pe := range p {
		last := i == len(p)-1
		switch {
		case pe.FieldName != nil:
			prefix := indent
			if item {
				prefix = indent[:len(indent)-2] + "- "
				item = false
			}
			name := *pe.FieldName
			if last {
				fmt.Fprintf(&b, "%s%s: %s\n", prefix, yamlKey(name), leaf)
			} else {
				fmt.Fprintf(&b, "%s%s:\n", prefix, yamlKey(name))
				indent += "  "
			}
		case pe.Key != nil:
			for j, k := range *pe.Key {
				prefix := indent + "  "
				if j == 0 {
					prefix = indent + "- "
				}
				fmt.Fprintf(&b, "%s%s: %s", prefix, yamlKey(k.Name), strings.TrimSpace(marshalSnippet(k.Value.Unstructured())))
				b.WriteString("\n")
			}
			indent += "  "
		case pe.Value != nil:
			// A set's item is the value itself.
			fmt.Fprintf(&b, "%s- %s\n", indent, strings.TrimSpace(marshalSnippet((*pe.Value).Unstructured())))
		default:
			// An item by position: its fields follow a "- ".
			fmt.Fprintf(&b, "%s# the item at %s:\n", indent, pathlang.ElementString(pe))
			indent += "  "
			item = true
		}
	}
	return b.String()
}

// yamlKey writes a field name as a YAML key, quoted when it has to be.
func yamlKey(name string) string {
	return strings.TrimSuffix(strings.TrimSpace(marshalSnippet(map[string]any{name: nil})), ": null")
}

// helmForce is Helm 4's way to take the fields: --force-conflicts (its
// default is false) on a server-side upgrade (--server-side=true: auto
// keeps a release installed client-side so). It sets the chart's values:
// said, with what the owners then do.
func (f fixer) helmForce() remedy.Remedy {
	release, ns := "RELEASE", f.r.Object.Namespace
	if f.t.HelmRelease != "" {
		release = f.t.HelmRelease
	} else if f.r.Live != nil {
		a := f.r.Live.GetAnnotations()
		if n := a[tools.HelmReleaseName]; n != "" {
			release = n
		}
		if n := a[tools.HelmReleaseNamespace]; n != "" {
			ns = n
		}
	}
	verb := "upgrade"
	if f.t.HelmInstall {
		verb = "install"
	}
	which := fmt.Sprintf("the helm %s of release %q", verb, release)
	if ns != "" {
		which += fmt.Sprintf(" in namespace %q", ns)
	}
	controllers := false
	for _, p := range f.paths {
		for _, cf := range p.owners {
			controllers = controllers || f.known(cf).Controller
		}
	}
	summary := fmt.Sprintf("With Helm 4's flags, take them: --force-conflicts (default false) makes the %s set the chart's values over the live ones of %s", verb, f.owners())
	if controllers {
		summary += "; a controller writes them back (a fight): prefer the chart change"
	}
	if f.t.HelmInstall {
		summary += " (--server-side=true is install's default)."
	} else {
		summary += ". --server-side=true keeps the upgrade server-side (--server-side=auto, the default, keeps a release installed client-side so)."
	}
	return remedy.Remedy{Kind: remedy.HelmForce, Tool: remedy.Helm, Summary: summary, Paths: f.uniquePaths(),
		Into:    &remedy.Into{Which: which, Edit: remedy.Append},
		Snippet: "--server-side=true --force-conflicts"}
}
