package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/pathlang"
)

// HandoverMode is how ownership moves.
type HandoverMode string

// Modes.
const (
	HandoverAuto       HandoverMode = "auto"
	HandoverController HandoverMode = "controller"
	HandoverApplier    HandoverMode = "applier"
	HandoverRelease    HandoverMode = "release"
)

// StepName says what a step does.
type StepName string

// Step names.
const (
	StepHold    StepName = "hold"
	StepShare   StepName = "share"
	StepRelease StepName = "release"
	StepWait    StepName = "wait"
	StepCleanup StepName = "cleanup"
	// StepLastApplied takes fields out of the last-applied annotation of
	// a client-side apply manager that no longer owns them.
	StepLastApplied StepName = "last-applied"
)

// HandoverStep is one write of the plan.
type HandoverStep struct {
	Name        StepName        `json:"name"`
	Description string          `json:"description"`
	Manager     string          `json:"manager"`
	Paths       []pathlang.Path `json:"paths"`
	Status      StepStatus      `json:"status"`
	// ResourceVersion the step wrote (empty unless done).
	ResourceVersion string                      `json:"resourceVersion"`
	ManagedFields   []metav1.ManagedFieldsEntry `json:"managedFieldsAfter"`
	// LastApplied is the step's edit of the last-applied annotation of a
	// client-side apply --from (same write); nil when none.
	LastApplied *LastAppliedEdit `json:"lastApplied,omitempty"`

	// Apply is the applied configuration of a hold step (package
	// handover's, never data).
	Apply map[string]any `json:"-"`
}

// FieldState is one field's value and owners.
type FieldState struct {
	Path   pathlang.Path `json:"path"`
	Value  any           `json:"value"`
	Owners []Owner       `json:"owners"`
	// StoredAs is where the apiserver keeps the value of a Secret's
	// .stringData.KEY: .data.KEY. stringData is write-only, so Value is
	// null. Empty for every other field.
	StoredAs pathlang.Path `json:"storedAs,omitempty"`
}

// HandoverReport is a handover's plan and outcome.
type HandoverReport struct {
	TypeMeta
	Object          ObjectRef      `json:"object"`
	Mode            HandoverMode   `json:"mode"`
	From            string         `json:"from"`
	FromSubresource string         `json:"fromSubresource"`
	To              string         `json:"to"`
	Status          HandoverStatus `json:"status"`
	Message         string         `json:"message"`
	Steps           []HandoverStep `json:"steps"`
	Before          []FieldState   `json:"before"`
	After           []FieldState   `json:"after"`
	// Orphaned are fields a release leaves owned by nobody (they stay, and
	// no apply will remove them); AppliersOnly are fields then owned only
	// by appliers, which the next apply of theirs without them removes.
	Orphaned     []pathlang.Path `json:"orphaned"`
	AppliersOnly []pathlang.Path `json:"appliersOnly"`
	Warnings     []string        `json:"warnings"`

	// Next says what the user should do now.
	Next string `json:"next"`
	// Fields are the paths the plan moves (all of From's for release --all).
	Fields []fieldpath.Path `json:"-"`
	// Content is the object the plan was made from, to print its paths.
	Content map[string]any `json:"-"`
}

// HandoverStatus is where a handover stands.
type HandoverStatus string

// The statuses of a HandoverReport.
const (
	HandoverPlanned HandoverStatus = "planned"
	// HandoverCompleted: the new owner owns the fields, the old one none.
	HandoverCompleted HandoverStatus = "completed"
	// HandoverAlreadyComplete: nothing was to do.
	HandoverAlreadyComplete HandoverStatus = "already-complete"
	// HandoverHeld: the old owner let go and the temporary manager holds
	// the fields until the controller writes them.
	HandoverHeld HandoverStatus = "held"
	// HandoverHandedOver: held, and safe: no applier owns the fields, no
	// last-applied annotation holds them, and the controller targets the
	// object, so it takes them when it next writes them. Nothing is left
	// for the user to do; the temporary manager lets go once the
	// controller writes them (when the command runs again, or with --wait).
	HandoverHandedOver HandoverStatus = "handed-over"
	HandoverFailed     HandoverStatus = "failed"
)

// StepStatus is where one step stands.
type StepStatus string

// The statuses of a HandoverStep.
const (
	StepPlanned  StepStatus = "planned"
	StepDone     StepStatus = "done"
	StepSkipped  StepStatus = "skipped"
	StepDryRun   StepStatus = "dry-run"
	StepFailed   StepStatus = "failed"
	StepTimedOut StepStatus = "timed-out"
)

// LastAppliedEdit is what a step does to the last-applied annotation.
//
// Client-side apply keeps its state in two places: its managedFields entry
// and the kubectl.kubernetes.io/last-applied-configuration annotation.
// kubectl's next client-side apply deletes every field the annotation
// holds and the new manifest does not, whoever owns it: a field handed
// over but left in the annotation is reset by that apply (an HPA's
// .spec.replicas back to 1). So when --from is a client-side apply
// manager, the step that takes the fields out of its entry takes them out
// of the annotation too, in the same resourceVersion-guarded write.
type LastAppliedEdit struct {
	Annotation string `json:"annotation"`
	// Manager is the client-side apply manager that owns the annotation:
	// the write is sent as it, so that the apiserver, which gives a
	// changed field to the writer, leaves the annotation where it was.
	Manager string `json:"manager"`
	// Removed are the paths taken out of the annotation.
	Removed []pathlang.Path `json:"removed"`
	// Deleted: the annotation itself was released, so it goes as a
	// whole (kubectl's next client-side apply then deletes nothing).
	Deleted bool `json:"deleted"`

	// Value is the annotation after the edit (package handover's,
	// never data).
	Value string `json:"-"`
}
