package v1alpha1

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/pathlang"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/remedy"
)

// Code names a kind of finding; codes are stable. Each has its row in
// pkg/audit's Table (severity, help, docs).
type Code string

// The findings.
const (
	// CodeDrift: with expected managers, fields of the main resource owned
	// by a manager that is neither expected nor allowed.
	CodeDrift Code = "drift"
	// CodeManualEdit: without expected managers, fields owned by kubectl's
	// imperative commands (edit, patch, label, ...).
	CodeManualEdit Code = "manual-edit"
	// CodeCSALeftover: an entry of client-side kubectl apply.
	CodeCSALeftover Code = "csa-leftover"
	// CodeBeforeFirstApply: fields owned by before-first-apply.
	CodeBeforeFirstApply Code = "before-first-apply"
	// CodeAncientChanges: fields owned by ancient-changes.
	CodeAncientChanges Code = "ancient-changes"
	// CodeUnservedAPIVersion: an entry recorded at an apiVersion the
	// server no longer serves (the apiserver drops it on the next write).
	CodeUnservedAPIVersion Code = "unserved-apiversion"
	// CodeGenericManager: a manager named after an HTTP user agent.
	CodeGenericManager Code = "generic-manager"
	// CodeEmptyManager: an entry that owns nothing.
	CodeEmptyManager Code = "empty-manager"
	// CodeLastAppliedSize: a last-applied annotation over the threshold.
	CodeLastAppliedSize Code = "last-applied-size"
	// CodeSharedAppliers: fields owned by two or more Apply managers.
	CodeSharedAppliers Code = "shared-appliers"
	// CodeRolloutRestart: kubectl rollout restart's stamp on the pod
	// template, which every restart writes: history, not drift.
	CodeRolloutRestart Code = "rollout-restart"
	// CodeHandoverHeld: kubectl ssa handover's temporary manager holds
	// fields until the controller they were handed to writes them.
	CodeHandoverHeld Code = "handover-held"
	// CodeManagedFieldsWiped: an object with no managedFields at all,
	// although an applier's bookkeeping says it was applied
	// (kubernetes/kubernetes#136919).
	CodeManagedFieldsWiped Code = "managed-fields-wiped"
	// CodeUpdateAndApply: one manager recorded both as Update and as
	// Apply of the main resource: two identities (helm/helm#31516).
	CodeUpdateAndApply Code = "update-and-apply"
	// CodeSharedListItems: fields of an associative list's items owned
	// by a hand edit (kubectl, Argo CD's UI) in an object an applier
	// applies (argoproj/argo-cd#25474).
	CodeSharedListItems Code = "shared-list-items"
	// CodeControllerScope: a Kubernetes component owning fields of an
	// applied object's spec that it never writes.
	CodeControllerScope Code = "controller-scope"
	// CodeImperative (optional): an object made by kubectl create, run,
	// expose or autoscale, and applied by nobody.
	CodeImperative Code = "imperative"
	// CodeAdoptedEdit (optional): a hand edit whose every field the
	// applier applies since, with the same values: history.
	CodeAdoptedEdit Code = "adopted-edit"
)

// Severity orders findings for --fail-on.
type Severity string

// Severities, lowest first.
const (
	SeverityInfo    Severity = "info"
	SeverityWarning Severity = "warning"
	SeverityError   Severity = "error"
	// SeverityNever is no severity: --fail-on=never never fails.
	SeverityNever Severity = "never"
)

// Severities are the values --fail-on takes, lowest first.
var Severities = []Severity{SeverityInfo, SeverityWarning, SeverityError, SeverityNever}

// Rank orders severities; -1 for an unknown one.
func (s Severity) Rank() int { return slices.Index(Severities, s) }

// Finding is one problem of one object's managedFields.
type Finding struct {
	// Cluster is the kubeconfig context the object was read from.
	Cluster     string      `json:"cluster"`
	Object      ObjectRef   `json:"object"`
	Code        Code        `json:"code"`
	Severity    Severity    `json:"severity"`
	Manager     string      `json:"manager"`
	Operation   Operation   `json:"operation"`
	Subresource Subresource `json:"subresource"`
	// SharedWith names the other appliers of shared-appliers, and the
	// appliers whose list a hand edit shares (shared-list-items).
	SharedWith []string        `json:"sharedWith,omitempty"`
	Paths      []pathlang.Path `json:"paths"`
	// Message says what is wrong in a sentence.
	Message string `json:"message"`
	// Reference is the public report of the incident a finding is the
	// signature of, when there is one.
	Reference string `json:"reference,omitempty"`
	// Evidence is what the finding was read from, beyond the manager and
	// paths (the findings of this year's incidents).
	Evidence *Evidence `json:"evidence,omitempty"`
	// Fix is the kubectl-ssa command that fixes it: that of the first of
	// Fixes when there are several ways; empty when nothing is to be done.
	Fix remedy.Command `json:"fix"`
	// Fixes are the ways to fix it, the default first, each saying what
	// it does to the values (drift and manual edits: adopt, forget).
	Fixes []Fix `json:"fixes,omitempty"`
}

// FixMode says what a fix does to the values of the fields.
type FixMode string

// The fix modes.
const (
	// FixAdopt: the applier takes the fields; its next apply keeps or
	// reverts them as its manifest says (the declared state).
	FixAdopt FixMode = "adopt"
	// FixForget: the fields are released; their values stay, owned by
	// nobody, until an apply whose manifest sets them: it then sets its
	// own value with no conflict (nothing protects the edit any more).
	FixForget FixMode = "forget"
)

// Fix is one way to fix a finding.
type Fix struct {
	Mode    FixMode        `json:"mode"`
	Summary string         `json:"summary"`
	Command remedy.Command `json:"command"`
}

// AuditReport is the result of an audit over one or more clusters.
type AuditReport struct {
	TypeMeta
	// Clusters are the contexts audited.
	Clusters []string `json:"clusters"`
	// Scanned is the number of objects read.
	Scanned  int          `json:"scanned"`
	Findings []Finding    `json:"findings"`
	Summary  AuditSummary `json:"summary"`
	// Unlisted are the kinds that could not be listed, with why.
	Unlisted []string `json:"unlisted"`
}

// AuditSummary counts findings per code and per manager.
type AuditSummary struct {
	Codes    []CodeCount    `json:"codes"`
	Managers []ManagerCount `json:"managers"`
}

// CodeCount is how often a code was found.
type CodeCount struct {
	Code     Code     `json:"code"`
	Severity Severity `json:"severity"`
	Findings int      `json:"findings"`
	Objects  int      `json:"objects"`
}

// ManagerCount is what was found about one manager.
type ManagerCount struct {
	Manager  string `json:"manager"`
	Findings int    `json:"findings"`
	Objects  int    `json:"objects"`
	Codes    []Code `json:"codes"`
}

// Max is the highest severity found, "" when nothing was.
func (r *AuditReport) Max() Severity {
	best := Severity("")
	for _, f := range r.Findings {
		if best == "" || f.Severity.Rank() > best.Rank() {
			best = f.Severity
		}
	}
	return best
}

// Evidence is what a finding was read from, beyond its manager and paths.
type Evidence struct {
	// Entries are the managedFields entries involved: update-and-apply's
	// Update and Apply entries of one manager; shared-list-items' hand
	// edit and the appliers of its list.
	Entries []EntryRef `json:"entries,omitempty"`
	// Bookkeeping are the labels and annotations that say an applier
	// applied the object (managed-fields-wiped).
	Bookkeeping []Mark `json:"bookkeeping,omitempty"`
	// Applier is the field manager of the tool the bookkeeping names
	// (managed-fields-wiped).
	Applier string `json:"applier,omitempty"`
	// List is the associative list whose items a hand edit holds in an
	// applied object (shared-list-items).
	List pathlang.Path `json:"list,omitempty"`
	// Shared are the fields both entries of update-and-apply hold: a
	// changed value conflicts with the manager itself.
	Shared []pathlang.Path `json:"shared,omitempty"`
	// Rule is the rule a finding applies, in a sentence (controller-scope:
	// what the component writes).
	Rule string `json:"rule,omitempty"`
}

// EntryRef names one managedFields entry, with how many fields it owns.
type EntryRef struct {
	Manager     string       `json:"manager"`
	Operation   Operation    `json:"operation"`
	Subresource Subresource  `json:"subresource,omitempty"`
	APIVersion  string       `json:"apiVersion"`
	Time        *metav1.Time `json:"time,omitempty"`
	Fields      int          `json:"fields"`
}

// MarkKind says where a bookkeeping mark is.
type MarkKind string

// The places of marks.
const (
	MarkLabel      MarkKind = "label"
	MarkAnnotation MarkKind = "annotation"
)

// Mark is one label or annotation an applier leaves on what it applies.
type Mark struct {
	Kind MarkKind `json:"kind"`
	Key  string   `json:"key"`
	// Value is the mark's value: a name (a release, an application, a
	// Kustomization); never the last-applied annotation's, which holds
	// the object (a Secret's data too).
	Value string `json:"value,omitempty"`
	// Tool is who leaves it: Argo CD, Flux, Helm, kubectl apply.
	Tool string `json:"tool"`
}
