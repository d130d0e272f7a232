package v1alpha1

import (
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/pathlang"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/remedy"
)

// ChangeKind classifies one change.
type ChangeKind string

// The kinds of change.
const (
	// ChangeModified: the value changes.
	ChangeModified ChangeKind = "modified"
	// ChangeAdded: the field appears.
	ChangeAdded ChangeKind = "added"
	// ChangeRemoved: the field disappears.
	ChangeRemoved ChangeKind = "removed"
	// ChangeReset: the applier stops setting the field and the apiserver sets
	// it back to its default.
	ChangeReset ChangeKind = "reset"
	// ChangeOwnership: the value stays, its owners change (shared, taken by
	// force, released).
	ChangeOwnership ChangeKind = "ownership"
)

// DiffChange is one leaf or atomic value of the object that the apply
// changes, or whose owners it changes.
type DiffChange struct {
	Path   pathlang.Path `json:"path"`
	Change ChangeKind    `json:"change"`
	// Before and After are the values (absent: the field is absent).
	Before       any     `json:"before,omitempty"`
	After        any     `json:"after,omitempty"`
	OwnersBefore []Owner `json:"ownersBefore"`
	OwnersAfter  []Owner `json:"ownersAfter"`
	// Conflict: the apply conflicts on this field; it changes only with
	// --force-conflicts.
	Conflict bool `json:"conflict,omitempty"`
	// SetBy is the admission step that set the value (a mutating
	// policy, a built-in plugin), "" when none did.
	SetBy string `json:"setBy,omitempty"`

	// HasBefore and HasAfter tell an absent value from a null one.
	HasBefore bool           `json:"-"`
	HasAfter  bool           `json:"-"`
	Elements  fieldpath.Path `json:"-"`
}

// Stay is what another manager keeps of the object that the manifest does
// not set: the apply neither sets nor removes it.
type Stay struct {
	Manager Owner           `json:"manager"`
	Paths   []pathlang.Path `json:"paths"`
	// Defaulted are such fields that hold their default value: without
	// an owner the apiserver would set them again, to the same value.
	Defaulted []pathlang.Path `json:"defaulted"`
	// Command lets the applier own these fields, so that its next apply
	// removes what the manifest does not set; empty for controllers,
	// which keep theirs, and for kubectl rollout restart's stamp.
	Command remedy.Command `json:"command"`
	// Note says what following Command does beyond ownership (it rolls
	// the pods), or why there is none.
	Note string `json:"note,omitempty"`
}

// DiffReport is what one apply changes in one object.
type DiffReport struct {
	TypeMeta
	ApplyMeta
	// Conflicts are those of the apply as asked (as in ConflictReport);
	// when there are some and Force is false, Changes and Result are
	// those of the forced apply, and the apply itself fails.
	Conflicts []Conflict `json:"conflicts"`
	// Remedies are the ways out of the conflicts that the text view
	// prints (set when there are conflicts and Force is false): the
	// forced apply (kubectl's, or Helm's flags), then explain-conflict,
	// which lists them all.
	Remedies []remedy.Remedy `json:"remedies,omitempty"`
	// Message is the apiserver's error for the apply as asked.
	Message string       `json:"message"`
	Changes []DiffChange `json:"changes"`
	Stays   []Stay       `json:"stays"`
	// Unknown are fields whose value after the apply kubectl-ssa does not
	// know: defaults that depend on other fields in ways not known here.
	Unknown  []pathlang.Path `json:"unknown"`
	Warnings []string        `json:"warnings"`
	// Admission is what the cluster's admission does to the apply, as far
	// as known here (as in ConflictReport); its modelled changes are in
	// Result and Changes.
	Admission *AdmissionReport `json:"admission,omitempty"`
	// Unchecked are what the apiserver checks after the field manager
	// and this prediction does not, found in the result (as in
	// ConflictReport).
	Unchecked []string `json:"unchecked,omitempty"`
	// ControlledResets and HelmUpgrade: as in ConflictReport.
	ControlledResets []ControlledReset `json:"controlledResets,omitempty"`
	// ResetRemedies are the ways out of the ControlledResets, before the
	// apply: explain-conflict, which lists them.
	ResetRemedies []remedy.Remedy `json:"resetRemedies,omitempty"`
	HelmUpgrade   *HelmUpgrade    `json:"helmUpgrade,omitempty"`
	// Live is the object before the apply (null: the apply creates it);
	// Result the object as the server would store it after the apply
	// (the forced apply, when it conflicts), defaults included.
	Live   map[string]any `json:"live"`
	Result map[string]any `json:"result"`
}

// HasChanges tells whether the apply changes a value, or fails on a
// conflict: what makes kubectl diff exit 1. A create is a change, even of
// an object that sets nothing but its name. A change of owners alone does
// not (kubectl diff does not see it either).
func (r *DiffReport) HasChanges() bool {
	if len(r.Conflicts) > 0 || r.Action == ActionCreate {
		return true
	}
	for _, c := range r.Changes {
		if c.Change != ChangeOwnership {
			return true
		}
	}
	return false
}
