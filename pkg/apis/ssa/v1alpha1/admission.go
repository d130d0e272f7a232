package v1alpha1

import (
	"fmt"
	"strings"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/pathlang"
)

// Effect is what an admission step does, or may do, to the apply.
type Effect string

// The effects.
const (
	// EffectMutates: a built-in plugin sets the paths of Ops (modelled, exact).
	EffectMutates Effect = "mutates"
	// EffectMayMutate: a mutating policy or webhook matches; what it changes is
	// not known here.
	EffectMayMutate Effect = "may-mutate"
	// EffectMayDeny: a validating policy or webhook matches; whether it denies
	// is not known here.
	EffectMayDeny Effect = "may-deny"
	// EffectMayWarn: a validating policy that only warns (validationActions
	// Warn) matches.
	EffectMayWarn Effect = "may-warn"
	// EffectAudits: a validating policy that only audits matches: the response
	// is the same either way.
	EffectAudits Effect = "audits"
	// EffectWarns: a built-in plugin returns Message as a warning (modelled).
	EffectWarns Effect = "warns"
	// EffectDenies: a built-in plugin refuses the apply with Message (modelled),
	// or a policy does (evaluated).
	EffectDenies Effect = "denies"
	// EffectAdmits: a policy matches, was evaluated and lets the apply through.
	EffectAdmits Effect = "admits"
)

// AdmissionStepKind is what kind of admission a step is.
type AdmissionStepKind string

// The kinds of steps.
const (
	BuiltinPlugin             AdmissionStepKind = "BuiltinPlugin"
	ValidatingAdmissionPolicy AdmissionStepKind = "ValidatingAdmissionPolicy"
	MutatingAdmissionPolicy   AdmissionStepKind = "MutatingAdmissionPolicy"
	ValidatingWebhook         AdmissionStepKind = "ValidatingWebhook"
	MutatingWebhook           AdmissionStepKind = "MutatingWebhook"
)

// AdmissionOp is one change a modelled plugin makes: set a field that is absent,
// replace a field's value, or append a value to a list (a finalizer, a
// taint).
type AdmissionOp struct {
	Op string `json:"op"`
	// Path names fields; a segment [key="value"] selects the item of a
	// keyed list (.spec.containers[name="c"]).
	Path  []string `json:"path"`
	Value any      `json:"value"`
	// Atomic: the list is atomic, so the value is owned with the rest
	// of it by the applier, whose next apply without it removes it
	// (otherwise what a plugin sets is owned by no one).
	Atomic bool `json:"atomic,omitempty"`
	// GenerateName: the name in Value is this prefix, to which the server
	// adds five random characters (a token volume's): not known here,
	// and listed in the step's unknown paths.
	GenerateName string `json:"generateName,omitempty"`
}

// The ops of an AdmissionOp.
const (
	OpSet     = "set"
	OpReplace = "replace"
	OpAppend  = "append"
	// OpRemove removes a path (a mutating policy's change).
	OpRemove = "remove"
)

// AdmissionStep is one admission plugin, policy or webhook that acts on the apply.
type AdmissionStep struct {
	Kind AdmissionStepKind `json:"kind"`
	// Name is the plugin, "POLICY (binding BINDING)", or
	// "CONFIGURATION/WEBHOOK".
	Name   string `json:"name"`
	Effect Effect `json:"effect"`
	// Ops are a modelled plugin's changes, in order.
	Ops []AdmissionOp `json:"ops,omitempty"`
	// Message is a modelled plugin's warning or denial, as the server
	// words it.
	Message string `json:"message,omitempty"`
	// Caveats qualify the match (match conditions in CEL not evaluated,
	// namespace labels not readable).
	Caveats []string `json:"caveats,omitempty"`
	// Unknown are the paths a modelled plugin sets to values that can't
	// be known here (a generated name).
	Unknown []pathlang.Path `json:"unknown,omitempty"`

	// Webhook is a matched webhook with matchConditions, and
	// Configuration its configuration's name: the evaluation decides
	// whether it is called (package admission's, never data).
	Webhook       map[string]any `json:"-"`
	Configuration string         `json:"-"`
}

// AdmissionReport is what admission does to one apply, as far as known here.
type AdmissionReport struct {
	// Exact: nothing matched whose effect is not known here (a modelled
	// plugin's changes are known).
	Exact bool `json:"exact"`
	// Reasons say why it is not exact, one line each.
	Reasons []string `json:"reasons"`
	// Denied is the server's error when a modelled plugin refuses the
	// apply ("": none does).
	Denied string `json:"denied,omitempty"`
	// Denials, when several policies deny, are the denials the server
	// may answer with: it reports the first in an order it does not fix.
	Denials []string `json:"denials,omitempty"`
	// AuditAnnotations are what the evaluated policies add to the
	// request's audit event.
	AuditAnnotations map[string]string `json:"auditAnnotations,omitempty"`
	// Warnings are the warnings the modelled plugins return.
	Warnings []string        `json:"warnings"`
	Steps    []AdmissionStep `json:"steps"`
}

// Unknown are the paths the modelled plugins set to values not known
// here.
func (r *AdmissionReport) Unknown() []fieldpath.Path {
	if r == nil {
		return nil
	}
	var out []fieldpath.Path
	for _, s := range r.Steps {
		for _, p := range s.Unknown {
			out = append(out, p.Elements())
		}
	}
	return out
}

// Summary is one line of what r says, for the text views ("" when
// nothing acts on the apply).
func (r *AdmissionReport) Summary() string {
	if r == nil || len(r.Steps) == 0 && r.Exact {
		return ""
	}
	var parts []string
	for _, s := range r.Steps {
		parts = append(parts, fmt.Sprintf("%s %s %s", s.Kind, s.Name, s.Effect))
	}
	if len(parts) == 0 {
		return strings.Join(r.Reasons, "; ")
	}
	return strings.Join(parts, "; ")
}

// Mutated tells whether an evaluated mutating policy changed the object.
func (r *AdmissionReport) Mutated() bool {
	if r == nil {
		return false
	}
	for _, s := range r.Steps {
		if s.Kind == MutatingAdmissionPolicy && s.Effect == EffectMutates {
			return true
		}
	}
	return false
}
