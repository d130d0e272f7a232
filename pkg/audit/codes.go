package audit

import (
	"fmt"
	"strings"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
)

// CodeInfo is what is known of one code: the one table from which the
// code order, the severities, the optional codes, audit's --help and the
// table of docs/audit.md come (TestCodeTable checks that they agree).
type CodeInfo struct {
	Code     v1alpha1.Code
	Severity v1alpha1.Severity
	// Optional codes are found only when --rules turns them on.
	Optional bool
	// Help is the code's summary in --help, line by line.
	Help []string
	// What and Fix are the docs table's columns (Markdown): what the
	// finding is, and the kubectl-ssa command that fixes it.
	What, Fix string
}

// Table is every code, in the order --help and the docs list them
// (the optional ones last).
var Table = []CodeInfo{
	{Code: v1alpha1.CodeDrift, Severity: v1alpha1.SeverityError,
		Help: []string{
			"with --expect-manager, fields of the main resource owned by",
			"another manager, or written through /scale by a person",
			"(kubectl scale, k9s, Lens); status writers, controllers",
			"scaling (the HPA), the managers of --allow-manager and",
			"Kubernetes' own components are not drift"},
		What: "with `--expect-manager M` (globs with `*` and `?`, repeatable): fields of the main resource owned by any other manager, and `.spec.replicas` written through `/scale` by a person (`kubectl scale`, k9s, Lens: any manager the tools catalogue does not know as a controller). Status writers, controllers scaling through `/scale` (the HPA as kube-controller-manager, KEDA, ...), `--allow-manager` globs and Kubernetes' own components (kube-controller-manager, kube-scheduler, kubelet, kube-apiserver and its priority-and-fairness config managers) are not drift",
		Fix:  "adopt: `migrate rename ... --from M --field-manager A` (or `handover ... --to A --mode applier` for a subresource's fields), A the expected applier of the object; forget: `handover release ... --from M --all`"},
	{Code: v1alpha1.CodeManualEdit, Severity: v1alpha1.SeverityWarning,
		Help: []string{
			"without --expect-manager, fields owned by kubectl's imperative",
			"commands: kubectl-edit, -patch, -label, -annotate, -set,",
			"-replace, -rollout, -scale, \"kubectl\" Update, and Argo CD's UI",
			"(argocd-server)"},
		What: "without `--expect-manager`: fields owned by kubectl's imperative commands — `kubectl-edit`, `-patch`, `-label`, `-annotate`, `-set`, `-replace`, `-rollout`, `-scale`, and `kubectl` Update (`kubectl scale` writes `/scale` so) — and by Argo CD's UI (`argocd-server`)",
		Fix:  "as `drift`, A the object's one applier"},
	{Code: v1alpha1.CodeCSALeftover, Severity: v1alpha1.SeverityWarning,
		Help: []string{
			"an entry of client-side kubectl apply"},
		What: "an entry of client-side `kubectl apply` (an Update entry owning the last-applied annotation; old kubectl's `kubectl` entry is this, not a manual edit)",
		Fix:  "`migrate ...`"},
	{Code: v1alpha1.CodeBeforeFirstApply, Severity: v1alpha1.SeverityInfo,
		Help: []string{
			"fields owned by before-first-apply"},
		What: "fields owned by `before-first-apply`",
		Fix:  "`migrate fold ... --field-manager A`, A the object's one applier; `APPLIER` (for you to name) when it has none or several: folding into a made-up applier would let its next apply delete those fields"},
	{Code: v1alpha1.CodeAncientChanges, Severity: v1alpha1.SeverityInfo,
		Help: []string{
			"fields owned by ancient-changes (merged old Update managers)"},
		What: "fields owned by `ancient-changes` (old Update managers the apiserver merged)",
		Fix:  "`migrate fold ... --field-manager APPLIER`"},
	{Code: v1alpha1.CodeUnservedAPIVersion, Severity: v1alpha1.SeverityWarning,
		Help: []string{
			"an entry at an apiVersion the server no longer serves: the",
			"apiserver drops it, and its ownership, on the next write"},
		What: "an entry recorded at an apiVersion the server no longer serves: the apiserver drops it, and its ownership, on the next write",
		Fix:  "`migrate apiversions ...`"},
	{Code: v1alpha1.CodeGenericManager, Severity: v1alpha1.SeverityWarning,
		Help: []string{
			"a manager named after a user agent (Go-http-client, unknown,",
			"node-fetch, python-requests, ...)"},
		What: "a manager named after a user agent (`Go-http-client`, `unknown`, `node-fetch`, `python-requests`, `curl`, ...): its writers can't be told apart",
		Fix:  "`migrate rename ... --from M --field-manager NEW-NAME` (choose the name)"},
	{Code: v1alpha1.CodeEmptyManager, Severity: v1alpha1.SeverityInfo,
		Help: []string{
			"an entry that owns nothing"},
		What: "an entry that owns nothing (the apiserver prunes these on every write since 1.2x; they come from older servers or restored objects)",
		Fix:  "`migrate release ... --from M`"},
	{Code: v1alpha1.CodeLastAppliedSize, Severity: v1alpha1.SeverityError,
		Help: []string{
			"a last-applied annotation over --last-applied-threshold bytes",
			"(all annotations together may hold 262144)"},
		What: "a last-applied annotation over `--last-applied-threshold` bytes (default 200000; all annotations together may hold 262144)",
		Fix:  "`migrate ... --remove-last-applied`"},
	{Code: v1alpha1.CodeSharedAppliers, Severity: v1alpha1.SeverityWarning,
		Help: []string{
			"fields applied by two or more Apply managers"},
		What: "fields applied by two or more Apply managers (one finding per group of co-owners, `sharedWith` naming the others)",
		Fix:  "`handover release ... --from LAST --field ...`"},
	{Code: v1alpha1.CodeRolloutRestart, Severity: v1alpha1.SeverityInfo,
		Help: []string{
			"kubectl rollout restart's stamp on the pod template: history;",
			"an applier made to own it would remove it, restarting every pod"},
		What: "`kubectl rollout restart`'s stamp on the pod template (`kubectl.kubernetes.io/restartedAt`): history, neither drift nor a manual edit. It stays and changes nothing; an applier made to own it would remove it at its next apply, restarting every pod",
		Fix:  "none"},
	{Code: v1alpha1.CodeHandoverHeld, Severity: v1alpha1.SeverityInfo,
		Help: []string{
			"fields kubectl ssa handover holds until the controller writes them"},
		What: "fields `kubectl-ssa-handover` holds at their values during a handover to a controller (an HPA writes `/scale` only when the count must change): neither drift nor a manual edit, as an applier adopting them would undo the handover",
		Fix:  "none (the handover, run again after the controller wrote them, lets go)"},
	{Code: v1alpha1.CodeManagedFieldsWiped, Severity: v1alpha1.SeverityWarning,
		Help: []string{
			"no managedFields at all on an object a GitOps tool, Helm or kubectl",
			"apply applied (its tracking label or annotation says so): wiped",
			"by a write while a conversion webhook failed (kubernetes#136919)"},
		What: "no managedFields at all on an object whose labels or annotations say an applier applies it: Argo CD's `argocd.argoproj.io/tracking-id`, Flux's `kustomize.toolkit.fluxcd.io/name` or `helm.toolkit.fluxcd.io/name`, Helm's `meta.helm.sh/release-name` (with `app.kubernetes.io/managed-by: Helm`), kubectl's last-applied annotation (not on an object a controller owns: that is a copy). A write while a conversion webhook failed wiped them before 1.37 ([kubernetes#136919](https://github.com/kubernetes/kubernetes/issues/136919)); so does a managedFields reset. Updates record nothing on such an object; the next server-side apply gives every field to `before-first-apply`, which a non-forced apply changing a value then conflicts with, and which keeps fields the manifest drops. `evidence` has the `bookkeeping` marks (never the last-applied annotation's content) and the `applier`",
		Fix:  "serve the conversion webhook, let the applier apply once (a sync, a reconcile, an upgrade), then `migrate release ... --from before-first-apply`: it lets go of what the applier doesn't declare, no value changes"},
	{Code: v1alpha1.CodeUpdateAndApply, Severity: v1alpha1.SeverityWarning,
		Help: []string{
			"one manager recorded as Update and as Apply (Helm 3 and Helm 4 as",
			"\"helm\", helm#31516): fields only the Update holds are never",
			"removed, and changing shared ones conflicts with itself"},
		What: "one manager recorded both as Update and as Apply of the main resource, two identities to the apiserver: Helm 3's Update and Helm 4's Apply by `helm` ([helm#31516](https://github.com/helm/helm/issues/31516)), or Flux's `helm-controller` across the same upgrade. `paths` are the fields only the Update entry holds: they stay when the chart drops them. `evidence.shared` are those both hold: an apply changing one conflicts with `helm` itself. `evidence.entries` names both entries. kubectl's own Update is `manual-edit`'s, client-side apply's `csa-leftover`'s",
		Fix:  "`migrate rename ... --from M --field-manager M` folds the Update entry into the Apply one; M's next apply then removes what its manifest no longer has. (`handover` and `migrate release` pick entries by manager, not operation: they would take the Apply entry too)"},
	{Code: v1alpha1.CodeSharedListItems, Severity: v1alpha1.SeverityWarning,
		Help: []string{
			"items of a list (ports, containers, env) a hand edit made",
			"(kubectl edit, patch, set, Argo CD's UI) in a list an applier",
			"applies: its next apply merges rather than replaces (argo-cd#25474)"},
		What: "items of an associative list (ports, containers, env) that a hand edit (`manual-edit`'s managers, Argo CD's UI among them) made (a new item, or one whose key it edited; fields it changed in the applier's items are `manual-edit`), in an object whose field the list lies in (`.spec`) an applier applies. An apply merges its items with them rather than replacing them: a port whose number was edited in Argo CD's UI comes back next to the declared one, two ports named `http`, which the apiserver refuses and Argo CD can't heal ([argo-cd#25474](https://github.com/argoproj/argo-cd/issues/25474)). `paths` name an item the edit made whole; `sharedWith` and `evidence.entries` the appliers, `evidence.list` the list. These fields are not repeated in `manual-edit` (with `--expect-manager` they are `drift` too)",
		Fix:  "adopt only: `handover ... --field ITEM --from M --to A --mode applier` (`APPLIER` for you to name when several apply the object); A's next apply then replaces the item with the declared one. Released, the item would stay"},
	{Code: v1alpha1.CodeControllerScope, Severity: v1alpha1.SeverityWarning,
		Help: []string{
			"kube-controller-manager, kube-scheduler or the kubelet owning spec",
			"fields of an applied object that they never write"},
		What: "kube-controller-manager, kube-scheduler or the kubelet owning, through an Update of the main resource, spec fields of an applied object that they never write: kube-controller-manager writes metadata, status and, of the spec, `.spec.replicas` (the HPA, as servers before 1.22 recorded `/scale` writes), a claim's `volumeName`, a volume's `claimRef`, a node's `podCIDR(s)` and `taints`, a namespace's `finalizers`; the scheduler a pod's `.spec.nodeName`; the kubelet its Node. Someone wrote the others under the component's name, and drift never reports it. Objects a controller owns, or nobody applies, are left alone; `evidence.rule` states the rule",
		Fix:  "adopt: `handover ... --field P --from M --to A --mode applier`; forget: `handover release ... --from M --field P`"},
	{Code: v1alpha1.CodeImperative, Severity: v1alpha1.SeverityWarning, Optional: true,
		Help: []string{
			"an object made by kubectl create, run, expose or autoscale that",
			"nobody applies: it is in no manifest"},
		What: "an object `kubectl create`, `run`, `expose` or `autoscale` made that nobody applies (no Apply entry, no client-side apply, no last-applied annotation) and no controller owns: it is in no manifest",
		Fix:  "`extract ... --manager kubectl-create` prints what it set, as a manifest to commit"},
	{Code: v1alpha1.CodeAdoptedEdit, Severity: v1alpha1.SeverityInfo, Optional: true,
		Help: []string{
			"a hand edit whose every field the applier applies since, with the",
			"same values (no drift nor manual-edit any more)"},
		What: "a hand edit whose every field the applier applies since: the applier holds them at the same values (an Update that changed one would have taken it from the applier)",
		Fix:  "`handover release ... --from M --all` (no value changes)"},
}

// Codes lists every code, in the order of Table; Optional are the codes
// an audit leaves out unless Options.Rules turns them on
// (--rules=+imperative); severities are Table's, by code.
var Codes, Optional, severities = fromTable()

func fromTable() (codes, optional []v1alpha1.Code, severities map[v1alpha1.Code]v1alpha1.Severity) {
	severities = make(map[v1alpha1.Code]v1alpha1.Severity, len(Table))
	for _, c := range Table {
		codes = append(codes, c.Code)
		if c.Optional {
			optional = append(optional, c.Code)
		}
		severities[c.Code] = c.Severity
	}
	return codes, optional, severities
}

// SeverityOf is the severity of each code: error for what changes fields
// behind the declared owner's back or will break writes, warning for what
// makes ownership wrong or unreadable, info for history.
func SeverityOf(c v1alpha1.Code) v1alpha1.Severity {
	if s, ok := severities[c]; ok {
		return s
	}
	return v1alpha1.SeverityInfo
}

// helpCodeWidth and helpSeverityWidth are the columns of --help's list.
const helpCodeWidth, helpSeverityWidth = 21, 8

// CodesHelp is --help's list of the codes: the found ones, then the
// optional ones under their heading.
func CodesHelp() string {
	var b strings.Builder
	b.WriteString("Findings (code: severity):\n")
	optional := false
	for _, c := range Table {
		if c.Optional && !optional {
			optional = true
			b.WriteString("\nOptional findings, off unless --rules turns them on:\n")
		}
		for i, l := range c.Help {
			if i == 0 {
				fmt.Fprintf(&b, "  %-*s %-*s %s\n", helpCodeWidth, c.Code, helpSeverityWidth, c.Severity, l)
				continue
			}
			fmt.Fprintf(&b, "%s%s\n", strings.Repeat(" ", 2+helpCodeWidth+1+helpSeverityWidth+1), l)
		}
	}
	return b.String()
}

// CodesMarkdown is the docs' table of the codes (docs/audit.md, between
// its audit-codes markers).
func CodesMarkdown() string {
	var b strings.Builder
	b.WriteString("| code | severity | what | fix |\n| --- | --- | --- | --- |\n")
	for _, c := range Table {
		code := "`" + string(c.Code) + "`"
		if c.Optional {
			code += " (optional)"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", code, c.Severity, c.What, c.Fix)
	}
	return b.String()
}
