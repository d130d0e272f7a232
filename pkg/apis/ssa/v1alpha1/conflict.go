package v1alpha1

import (
	"fmt"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/pathlang"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/remedy"
)

// Action says whether an apply creates the object or changes it.
type Action string

// Actions of a report.
const (
	ActionCreate Action = "create"
	ActionApply  Action = "apply"
)

// Conflict is one field another manager owns with a different value.
type Conflict struct {
	Path         pathlang.Path `json:"path"`
	Manager      string        `json:"manager"`
	Operation    Operation     `json:"operation"`
	Subresource  Subresource   `json:"subresource"`
	APIVersion   string        `json:"apiVersion"`
	Time         *metav1.Time  `json:"time"`
	LiveValue    any           `json:"liveValue"`
	AppliedValue any           `json:"appliedValue"`
	// Likely says what the owner most likely is (pkg/tools' Describe):
	// "Argo CD's UI", "the HorizontalPodAutoscaler"; empty when nothing
	// is known.
	Likely string `json:"likely,omitempty"`
	// StoredAs is where the apiserver keeps the value of a Secret's
	// .stringData.KEY: .data.KEY. stringData is write-only, so the live
	// object has no value at Path to share. Empty for every other field.
	StoredAs pathlang.Path `json:"storedAs,omitempty"`
}

// Owner returns the conflicting manager's identity.
func (c Conflict) Owner() Owner {
	return Owner{Manager: c.Manager, Operation: c.Operation, Subresource: c.Subresource, APIVersion: c.APIVersion, Time: c.Time}
}

// FirstPerOwner is the first conflict with each owner (manager and
// subresource), in order.
func FirstPerOwner(conflicts []Conflict) []Conflict {
	var out []Conflict
	type owner struct {
		manager     string
		subresource Subresource
	}
	seen := map[owner]bool{}
	for _, cf := range conflicts {
		if o := (owner{cf.Manager, cf.Subresource}); !seen[o] {
			seen[o] = true
			out = append(out, cf)
		}
	}
	return out
}

// Takes says which fields a forced apply takes from whom:
// `.spec.replicas from "kube-controller-manager" with subresource "scale"`.
func Takes(conflicts []Conflict) string {
	byOwner := map[string][]string{}
	var owners []string
	for _, cf := range conflicts {
		key := fmt.Sprintf("%q", cf.Manager)
		if cf.Subresource != "" {
			key += fmt.Sprintf(" with subresource %q", cf.Subresource)
		}
		if _, ok := byOwner[key]; !ok {
			owners = append(owners, key)
		}
		byOwner[key] = append(byOwner[key], cf.Path.String())
	}
	sort.Strings(owners)
	out := make([]string, 0, len(owners))
	for _, k := range owners {
		out = append(out, fmt.Sprintf("%s from %s", strings.Join(byOwner[k], ", "), k))
	}
	return strings.Join(out, "; ")
}

// Retained is a field the applier stopped setting that stays, because
// other managers still own it.
type Retained struct {
	Path   pathlang.Path `json:"path"`
	Owners []Owner       `json:"owners"`
}

// Refusal is a tool refusing an object before it applies it.
type Refusal struct {
	Tool remedy.Tool `json:"tool"`
	// Release is the Helm release, Namespace its namespace.
	Release   string `json:"release,omitempty"`
	Namespace string `json:"namespace,omitempty"`
	// Message is the tool's error, as it words it.
	Message string `json:"message"`
	// Labels and Annotations are what the object needs for the tool to
	// take it (Helm's ownership metadata); set by the caller, which
	// knows the tool.
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// ConflictReport is the prediction for one apply to one object
// (explain-conflict).
type ConflictReport struct {
	TypeMeta
	ApplyMeta
	Conflicts []Conflict `json:"conflicts"`
	// Message is the apiserver's error message for this apply, empty
	// when it succeeds.
	Message string `json:"message"`
	// ApplierOperation is how the field manager writes the object now,
	// read from its entries for the main resource in the live
	// managedFields: Apply when it has an Apply entry (it applies
	// server-side), Update when it has only Update entries (client-side
	// applies, patches, or writes from before it applied server-side),
	// empty when it has none (the object is new to it). The tools' fixes
	// and the note on a tool that forces read it: a client-side write
	// does not conflict, it patches.
	ApplierOperation metav1.ManagedFieldsOperationType `json:"applierOperation,omitempty"`
	// Removed are fields the applier owned and no longer sets, that
	// nobody else owns and that have no default: the apply removes them.
	Removed []pathlang.Path `json:"removed"`
	// Reset are such fields that the apiserver sets back to a default.
	Reset []Reset `json:"reset"`
	// MaybeReset are such fields whose default depends on other fields
	// in a way not known here.
	MaybeReset []MaybeReset `json:"maybeReset"`
	// Retained are fields the applier no longer sets that stay because
	// other managers own them.
	Retained []Retained `json:"retained"`
	// Released lists managers that own nothing after a forced apply and
	// disappear from managedFields.
	Released []Owner `json:"releasedManagers"`
	// ManagedFields are the object's managedFields as the server would
	// store them after the apply (unchanged when it fails).
	ManagedFields []metav1.ManagedFieldsEntry `json:"managedFields"`
	Warnings      []string                    `json:"warnings"`
	// Autoscalers are the HorizontalPodAutoscalers that scale the object,
	// when the manifest sets .spec.replicas (which they own).
	Autoscalers []Autoscaler `json:"autoscalers,omitempty"`
	// ReplicasHolders, when Autoscalers are set, are the managers that
	// must hand .spec.replicas over to the autoscaler's controller.
	ReplicasHolders []ReplicasHolder `json:"replicasHolders,omitempty"`
	// ControlledResets are fields a controller sets that the write
	// removes or sets back to a default: the controller sets them again
	// after it, and meanwhile the object runs with the default (an
	// autoscaled workload's .spec.replicas: pods go, then come back).
	ControlledResets []ControlledReset `json:"controlledResets,omitempty"`
	// HelmUpgrade says how the Helm upgrade predicted writes
	// (--helm-release), and what the other way would do differently.
	HelmUpgrade *HelmUpgrade `json:"helmUpgrade,omitempty"`
	// KubectlUpgrade lists the client-side apply managers kubectl moves
	// to the field manager before the apply (empty: none).
	KubectlUpgrade []string `json:"kubectlUpgrade"`
	// Admission is what the cluster's admission does to the apply, as far
	// as known here (nil: not read, as with --local).
	Admission *AdmissionReport `json:"admission,omitempty"`
	// Refused is the applying tool refusing the object before it sends
	// any apply (Helm's ownership check of an object that exists but is
	// not the release's); the caller, which knows the tool, sets it.
	Refused *Refusal `json:"refused,omitempty"`
	// Unchecked are what the apiserver checks after the field manager
	// and this prediction does not, found in the result (validation):
	// the prediction is not exact, --verify checks it.
	Unchecked []string `json:"unchecked,omitempty"`
	// ForcedAdmission is what admission does to the forced apply, when
	// this one conflicts (it fails before admission): what taking the
	// fields with --force-conflicts then meets.
	ForcedAdmission *AdmissionReport `json:"forcedAdmission,omitempty"`
	Verify          *Verification    `json:"verify,omitempty"`
	// Resolutions are the ways out, as data (see Resolutions); set by
	// the caller, which knows how the user reached the cluster.
	Resolutions []remedy.Remedy `json:"resolutions,omitempty"`
}

// Reset is a field the applier no longer sets that the apiserver sets
// back to its default: the apply does not remove it, it resets it.
type Reset struct {
	Path pathlang.Path `json:"path"`
	// Value is the default the field gets.
	Value any `json:"value"`
	// Unchanged: the live value already is the default.
	Unchanged bool `json:"unchanged"`
	// Kept: not a default but a value the apiserver allocated (a
	// Service's cluster IP, a node port), which its storage keeps.
	Kept bool `json:"kept"`
	// Was is the live value the reset replaces: unset when Unchanged or
	// when the live object has none, null when the live object holds an
	// explicit null; a Secret's values are redacted unless
	// --show-secret-values.
	Was *any `json:"was,omitempty"`

	PathElements fieldpath.Path `json:"-"`
}

// MaybeReset is a field the applier no longer sets whose default
// depends on other fields in a way kubectl-ssa does not know: the
// apiserver may set it again, to a value not predicted here.
type MaybeReset struct {
	Path pathlang.Path `json:"path"`
	// DependsOn says what the default depends on.
	DependsOn string `json:"dependsOn"`

	PathElements fieldpath.Path `json:"-"`
}

// Changes lists the fields the applier stopped setting whose value the
// apply changes: the removed ones, the resets to another value and the
// possible resets. A check that an apply changes no value (migrate's)
// refuses on any of them; resets to the same value change nothing.
func (r *ConflictReport) Changes() []pathlang.Path {
	out := append([]pathlang.Path{}, r.Removed...)
	for _, rs := range r.Reset {
		if !rs.Unchanged {
			out = append(out, rs.Path)
		}
	}
	for _, m := range r.MaybeReset {
		out = append(out, m.Path)
	}
	return out
}

// VerifyStatus is the outcome of --verify.
type VerifyStatus string

// The outcomes of --verify.
const (
	// VerifyAgrees: the server's dry run answered what was predicted.
	VerifyAgrees VerifyStatus = "agrees"
	// VerifyDiffers: it did not; Differences say how.
	VerifyDiffers VerifyStatus = "differs"
	// VerifyRefused: the server refused the dry run (it needs patch
	// permission): nothing was compared.
	VerifyRefused VerifyStatus = "refused"
	// VerifyNotRun: the server can't dry-run the apply yet (an object in
	// a Namespace the input creates before it): nothing was compared.
	VerifyNotRun VerifyStatus = "not-run"
	// VerifyResolved: the prediction was not exact (admission not
	// evaluated here matched, or a check the server's configuration
	// decides: ServerConfiguration), and the server's dry run differs
	// only where that acts (the object's values, a denial): the server's
	// answer stands for it. Differences list what it did; ServerDenied
	// is its denial, if it refused the apply.
	VerifyResolved VerifyStatus = "resolved"
)

// Verification compares the prediction with the server's dry run.
type Verification struct {
	Status VerifyStatus `json:"status"`
	// Agrees is Status == agrees, for scripts written before Status.
	Agrees bool `json:"agrees"`
	// Compared says what the dry run was compared with: a server dry run
	// is one request, so of kubectl's sequence only the first apply.
	Compared string `json:"compared"`
	// FirstApplyOnly: the apply is kubectl's sequence of requests, and
	// the dry run was compared with its first apply only (as Compared
	// says).
	FirstApplyOnly bool     `json:"firstApplyOnly,omitempty"`
	Differences    []string `json:"differences"`
	// Reason says why nothing was compared (refused, not-run), or what
	// the server's answer resolved (resolved).
	Reason string `json:"reason,omitempty"`
	// ServerDenied is the server's denial when the prediction did not
	// have it (resolved: admission not evaluated here refused the apply).
	ServerDenied string `json:"serverDenied,omitempty"`
	// ServerConfiguration names the apiserver's own settings that decided
	// the differences (its flags, as --allow-privileged, and the node
	// ports and IPs it holds for other objects): what no prediction
	// knows, and assumes allows the apply. Set with resolved.
	ServerConfiguration []string `json:"serverConfiguration,omitempty"`
	// ServerWarnings are the warnings the server's dry run returned
	// (deprecations, admission's); a warning the prediction has
	// (admission.warnings) and the server does not is a difference.
	ServerWarnings []string `json:"serverWarnings"`
}

// AutoscalerController is the manager an HPA's writes to /scale are
// recorded as.
const AutoscalerController = "kube-controller-manager"

// AutoscalerTakesBack tells whether a conflict is with the autoscaler's
// writes to /scale: taken from it, replicas go back to it at its next
// scaling, so no handover is offered from it.
func (r *ConflictReport) AutoscalerTakesBack(cf Conflict) bool {
	return len(r.Autoscalers) > 0 && cf.Manager == AutoscalerController && cf.Subresource == SubresourceScale
}

// Autoscaler is a HorizontalPodAutoscaler whose scaleTargetRef is the
// applied object: its controller writes .spec.replicas through /scale.
type Autoscaler struct {
	Name        string `json:"name"`
	MinReplicas int64  `json:"minReplicas"`
	MaxReplicas int64  `json:"maxReplicas"`
}

// ControlledReset is a field a controller sets that a write removes or
// resets: see ConflictReport.ControlledResets.
type ControlledReset struct {
	Path pathlang.Path `json:"path"`
	// Controller sets it: "HorizontalPodAutoscaler web".
	Controller string `json:"controller"`
	// InInput: the controller's object comes with the same input (the
	// render's own autoscaler), it is not in the cluster yet.
	InInput bool `json:"inInput,omitempty"`
	// Removed: the write removes the field (no default known), else it
	// resets it to Value. Set: the write sets it to Value, the
	// manifest's, over the controller's (a client-side write, which
	// never conflicts).
	Removed bool `json:"removed,omitempty"`
	Set     bool `json:"set,omitempty"`
	Value   any  `json:"value,omitempty"`
	// Was is the live value.
	Was *any `json:"was,omitempty"`
}

// HelmUpgradeMode is how helm upgrade writes a release's objects.
type HelmUpgradeMode string

// The ways helm upgrade writes.
const (
	// HelmServerSide: a server-side apply as "helm" (after moving a
	// client-side release's ownership to it, csaupgrade).
	HelmServerSide HelmUpgradeMode = "server-side"
	// HelmClientSide: Helm's client-side patch, an update as "helm":
	// fields the last revision rendered and the render drops are
	// deleted, whoever owns them.
	HelmClientSide HelmUpgradeMode = "client-side"
)

// HelmUpgrade is the Helm upgrade a prediction is of.
type HelmUpgrade struct {
	Mode HelmUpgradeMode `json:"mode"`
	// Flag is helm upgrade's --server-side value that makes this write:
	// "auto" when the default does.
	Flag string `json:"flag"`
	// Other is the other way, with the Flag that makes it, when the
	// release can be upgraded either way and the two differ; nil when
	// they don't.
	Other *HelmOtherWay `json:"other,omitempty"`
}

// HelmOtherWay is what the other way of writing does differently.
type HelmOtherWay struct {
	Mode HelmUpgradeMode `json:"mode"`
	Flag string          `json:"flag"`
	// Keeps are fields whose stored value this write changes (removes,
	// resets or sets) and the other way leaves as it is; Changes, the
	// reverse.
	Keeps   []pathlang.Path `json:"keeps,omitempty"`
	Changes []pathlang.Path `json:"changes,omitempty"`
	// Conflicts: the other way fails on conflicts.
	Conflicts bool `json:"conflicts,omitempty"`
	// ControlledResets: the other way resets a field a controller sets.
	ControlledResets bool `json:"controlledResets,omitempty"`
}

// ReplicasHolder is a manager that must let go of .spec.replicas before
// the autoscaler's controller alone decides it: the --from of a handover
// to AutoscalerController.
type ReplicasHolder struct {
	Manager string `json:"manager"`
	// LastApplied: a client-side apply manager whose last-applied
	// annotation holds .spec.replicas, whether or not its managedFields
	// still do (a controller's write took them): kubectl's next
	// client-side apply of a manifest without replicas would reset them.
	LastApplied bool `json:"lastApplied"`
}
