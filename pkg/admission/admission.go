// Package admission predicts what the apiserver's admission does to an
// apply after its field manager: the built-in plugins that change common
// objects (DefaultStorageClass, StorageObjectInUseProtection,
// DefaultIngressClass, TaintNodesByCondition; for Pods LimitRanger,
// ServiceAccount, Priority, DefaultTolerationSeconds and RuntimeClass) are
// modelled from the apiserver's code; admission policies and webhooks are
// matched as the apiserver matches them (rules, scope, namespace and
// object selectors), and their effect, which only they know, makes the
// prediction not exact.
//
// It reads no cluster: a Config is what the caller listed.
package admission

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	smdschema "sigs.k8s.io/structured-merge-diff/v6/schema"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
)

// Config is the cluster's admission, as listed by the caller.
type Config struct {
	StorageClasses []*unstructured.Unstructured
	IngressClasses []*unstructured.Unstructured
	// Pod is what a Pod's create reads (nil: not read).
	Pod *PodReads
	// Policies and webhooks, any served version (their matching fields
	// are the same in each).
	ValidatingPolicies, ValidatingBindings []*unstructured.Unstructured
	MutatingPolicies, MutatingBindings     []*unstructured.Unstructured
	ValidatingWebhooks, MutatingWebhooks   []*unstructured.Unstructured
	// Policies evaluates the policies that match (nil: they are only
	// matched).
	Policies PolicyEvaluator
	// Unreadable names what could not be listed (with why): admission
	// is then not known.
	Unreadable []string
}

// Request is the apply as admission sees it.
type Request struct {
	// Object is the object after the field manager; Old the live one
	// (nil: the apply creates the object).
	Object, Old *unstructured.Unstructured
	Resource    schema.GroupVersionResource
	Subresource string
	Namespaced  bool
	// NamespaceLabels are the labels of the object's namespace;
	// NamespaceUnknown when they could not be read.
	NamespaceLabels  map[string]string
	NamespaceUnknown bool
	// ServerMinor is the apiserver's Kubernetes minor (0: not known),
	// which PodSecurity's "latest" means.
	ServerMinor int
	// Defaulted is Object with the apiserver's defaults (nil: Object):
	// what policies see. Default fills in those defaults in an object a
	// mutating policy changed (nil: not known).
	Defaulted func() *unstructured.Unstructured
	Default   func(*unstructured.Unstructured)
	// FieldManager is the apply's; Schema and TypeName type the object
	// (nil: not known), for the policies' evaluation.
	FieldManager string
	Schema       *smdschema.Schema
	TypeName     string
}

// Operation is the admission operation of the apply: CREATE when it
// creates the object, else UPDATE (an apply is a patch).
func (r Request) Operation() string {
	if r.Old == nil {
		return "CREATE"
	}
	return "UPDATE"
}

// Evaluate says what admission does to req under c.
func Evaluate(c *Config, req Request) *v1alpha1.AdmissionReport {
	r := &v1alpha1.AdmissionReport{Exact: true, Reasons: []string{}, Warnings: []string{}, Steps: []v1alpha1.AdmissionStep{}}
	if c == nil {
		return r
	}
	if !exempt(req.Object) {
		for _, u := range c.Unreadable {
			notExact(r, "admission is not fully known: "+u)
		}
	}
	r.Steps = append(r.Steps, builtins(c, req)...)
	if exempt(req.Object) {
		// The apiserver calls no policy or webhook for these.
		return r
	}
	// A built-in plugin that refuses the mutated object ends admission.
	r.Denied = deniedBy(r.Steps)
	m := &matched{
		mutating:        mutatingPolicies(c, req),
		validating:      validatingPolicies(c, req),
		mutatingHooks:   webhooks(c.MutatingWebhooks, v1alpha1.MutatingWebhook, req),
		validatingHooks: webhooks(c.ValidatingWebhooks, v1alpha1.ValidatingWebhook, req),
	}
	m.evaluate(c, req, r)
	m.mutatingPhase(req, r)
	m.validatingPhase(c, req, r)
	notExactSteps(r)
	return r
}

// matched are the policies and webhooks that match the request, and
// what the policy evaluator said of them (nil: not evaluated).
type matched struct {
	mutating, validating           []v1alpha1.AdmissionStep
	mutatingHooks, validatingHooks []v1alpha1.AdmissionStep
	evaluated                      *PolicyResult
	hookDenied                     string
}

// evaluate hands the matching policies (and the webhooks' match
// conditions) to the evaluator, when there are some and no built-in
// plugin denied, and marks the steps with its answer.
func (m *matched) evaluate(c *Config, req Request, r *v1alpha1.AdmissionReport) {
	if r.Denied != "" || c.Policies == nil || (len(m.mutating)+len(m.validating) == 0 && !conditional(m.mutatingHooks) && !conditional(m.validatingHooks)) {
		return
	}
	base := policyObject(req, r) // what the policies see
	evaluated, err := evaluatePolicies(c, req, base, append(append([]v1alpha1.AdmissionStep{}, m.mutatingHooks...), m.validatingHooks...))
	if err != nil {
		why := "could not be evaluated here: " + strings.Join(strings.Fields(err.Error()), " ")
		notExact(r, "admission policies "+why)
		// Each step says it too.
		for _, steps := range [][]v1alpha1.AdmissionStep{m.mutating, m.validating} {
			for i := range steps {
				steps[i].Caveats = append(steps[i].Caveats, why)
			}
		}
		return
	}
	if evaluated == nil {
		return
	}
	m.evaluated = evaluated
	m.mutating = evaluatedSteps(m.mutating, evaluated, base)
	m.mutatingHooks, m.hookDenied = calledWebhooks(m.mutatingHooks, evaluated)
	if by := mayMutate(m.mutatingHooks); by != "" && !evaluated.DeniedInMutation {
		// The validating policies see what that webhook returns,
		// which is not known here: what they say of the object
		// without its changes is not their answer.
		for i := range m.validating {
			m.validating[i].Caveats = append(m.validating[i].Caveats, "evaluated here on the object before "+by+" changes it, which is not known here: "+evaluatedAs(m.validating[i], evaluated))
		}
		evaluated.Denied, evaluated.Warnings = "", nil
	} else {
		m.validating = evaluatedSteps(m.validating, evaluated, base)
	}
}

// mutatingPhase adds the mutating policies and webhooks, and a denial in
// that phase.
func (m *matched) mutatingPhase(req Request, r *v1alpha1.AdmissionReport) {
	evaluated := m.evaluated
	if r.Denied == "" {
		r.Steps = append(r.Steps, m.mutating...)
		r.Steps = append(r.Steps, m.mutatingHooks...)
		if req.Resource.GroupResource() == pods && req.Old == nil && req.Subresource == "" && (&v1alpha1.AdmissionReport{Steps: m.mutating}).Mutated() {
			// A change by a mutating policy has the admission chain run
			// again, the built-in plugins included, on the changed Pod.
			notExact(r, "a mutating policy changes the Pod: the server runs its built-in plugins (LimitRanger, ServiceAccount, ...) again on it, which is not modelled here")
		}
	}
	if evaluated != nil && evaluated.Denied == "" && m.hookDenied != "" {
		// A webhook's matchConditions failed under failurePolicy Fail.
		evaluated.Denied, evaluated.DeniedInMutation = m.hookDenied, true
	}
	if r.Denied == "" && evaluated != nil && evaluated.DeniedInMutation {
		// The mutating phase refused it: nothing validates it.
		r.Denied = evaluated.Denied
	}
}

// validatingPhase adds the validating steps in the apiserver's order:
// the built-in plugins, then policies, then webhooks; the first denial
// ends it.
func (m *matched) validatingPhase(c *Config, req Request, r *v1alpha1.AdmissionReport) {
	evaluated := m.evaluated
	for _, s := range validatingBuiltins(c, req) {
		if r.Denied != "" {
			break
		}
		r.Steps = append(r.Steps, s)
		switch s.Effect {
		case v1alpha1.EffectDenies:
			r.Denied = s.Message
		case v1alpha1.EffectWarns:
			r.Warnings = append(r.Warnings, s.Message)
		}
	}
	if r.Denied == "" {
		r.Steps = append(r.Steps, m.validating...)
		if evaluated != nil {
			r.Warnings = append(r.Warnings, evaluated.Warnings...)
			r.AuditAnnotations = evaluated.AuditAnnotations
			r.Denied = evaluated.Denied
			for _, s := range m.validating {
				if s.Effect == v1alpha1.EffectDenies {
					r.Denials = append(r.Denials, s.Message)
				}
			}
			if len(r.Denials) < 2 {
				r.Denials = nil
			}
		}
	}
	if r.Denied == "" {
		validatingHooks := m.validatingHooks
		if evaluated != nil {
			validatingHooks, r.Denied = calledWebhooks(validatingHooks, evaluated)
		}
		r.Steps = append(r.Steps, validatingHooks...)
	}
}

// notExactSteps makes the report not exact for every step that may deny
// or change the object, which is not evaluated here.
func notExactSteps(r *v1alpha1.AdmissionReport) {
	for _, s := range r.Steps {
		switch s.Effect {
		case v1alpha1.EffectMayDeny, v1alpha1.EffectMayMutate:
			if s.Kind == v1alpha1.BuiltinPlugin {
				notExact(r, fmt.Sprintf("admission plugin %s: %s", s.Name, strings.Join(s.Caveats, "; ")))
				continue
			}
		}
		why := "not evaluated here"
		if len(s.Caveats) > 0 && (s.Kind == v1alpha1.ValidatingAdmissionPolicy || s.Kind == v1alpha1.MutatingAdmissionPolicy) {
			why += ": " + strings.Join(s.Caveats, "; ")
		}
		switch s.Effect {
		case v1alpha1.EffectMayDeny:
			notExact(r, fmt.Sprintf("%s %s matches: it may deny the apply (%s)", s.Kind, s.Name, why))
		case v1alpha1.EffectMayMutate:
			notExact(r, fmt.Sprintf("%s %s matches: it may change the object (%s)", s.Kind, s.Name, why))
		}
	}
}

// exempt tells admission's own configuration, which the apiserver
// exempts from policies and webhooks (IsExemptAdmissionConfigurationResource).
func exempt(obj *unstructured.Unstructured) bool {
	gvk := obj.GroupVersionKind()
	if gvk.Group != "admissionregistration.k8s.io" {
		return false
	}
	switch gvk.Kind {
	case "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration", "ValidatingAdmissionPolicy",
		"ValidatingAdmissionPolicyBinding", "MutatingAdmissionPolicy", "MutatingAdmissionPolicyBinding":
		return true
	}
	return false
}

func notExact(r *v1alpha1.AdmissionReport, reason string) {
	r.Exact = false
	r.Reasons = append(r.Reasons, reason)
}

// Apply makes the modelled changes of r on obj, in order.
func Apply(r *v1alpha1.AdmissionReport, obj *unstructured.Unstructured) {
	if r == nil {
		return
	}
	for _, s := range r.Steps {
		for _, op := range s.Ops {
			applyOp(op, obj.Object)
		}
	}
}

// newestDefault is the default class the apiserver picks among classes:
// the newest marked default, then the first by name.
func newestDefault(classes []*unstructured.Unstructured, annotations ...string) string {
	var defaults []*unstructured.Unstructured
	for _, c := range classes {
		for _, a := range annotations {
			if c.GetAnnotations()[a] == "true" {
				defaults = append(defaults, c)
				break
			}
		}
	}
	if len(defaults) == 0 {
		return ""
	}
	sort.Slice(defaults, func(i, j int) bool {
		ti, tj := defaults[i].GetCreationTimestamp(), defaults[j].GetCreationTimestamp()
		if ti.Equal(&tj) {
			return defaults[i].GetName() < defaults[j].GetName()
		}
		return tj.Before(&ti)
	})
	return defaults[0].GetName()
}

// builtins are the default admission plugins that change common applied
// objects on create, as the apiserver's code does.
func builtins(c *Config, req Request) []v1alpha1.AdmissionStep {
	if req.Resource.GroupResource() == pods && req.Subresource == "" && req.Old != nil {
		// Priority and DefaultTolerationSeconds act on updates too.
		steps, _ := podMutating(c, req)
		return steps
	}
	if req.Old != nil || req.Subresource != "" {
		return nil
	}
	var steps []v1alpha1.AdmissionStep
	obj := req.Object
	switch req.Resource.GroupResource() {
	case schema.GroupResource{Resource: "persistentvolumeclaims"}:
		_, hasClass, _ := unstructured.NestedFieldNoCopy(obj.Object, "spec", "storageClassName")
		_, hasBeta := obj.GetAnnotations()["volume.beta.kubernetes.io/storage-class"]
		if !hasClass && !hasBeta {
			if def := newestDefault(c.StorageClasses, "storageclass.kubernetes.io/is-default-class", "storageclass.beta.kubernetes.io/is-default-class"); def != "" {
				steps = append(steps, v1alpha1.AdmissionStep{Kind: v1alpha1.BuiltinPlugin, Name: "DefaultStorageClass", Effect: v1alpha1.EffectMutates,
					Ops: []v1alpha1.AdmissionOp{{Op: v1alpha1.OpSet, Path: []string{"spec", "storageClassName"}, Value: def}}})
			}
		}
		steps = append(steps, finalizer("kubernetes.io/pvc-protection", obj)...)
	case pods:
		steps, _ = podMutating(c, req)
	case schema.GroupResource{Resource: "nodes"}:
		// TaintNodesByCondition: a new node is not ready until the node
		// controller says so.
		if !hasTaint(obj, notReadyTaint, "NoSchedule") {
			steps = append(steps, v1alpha1.AdmissionStep{Kind: v1alpha1.BuiltinPlugin, Name: "TaintNodesByCondition", Effect: v1alpha1.EffectMutates,
				Ops: []v1alpha1.AdmissionOp{{Op: v1alpha1.OpAppend, Path: []string{"spec", "taints"}, Value: map[string]any{"key": notReadyTaint, "effect": "NoSchedule"}, Atomic: true}}})
		}
	case schema.GroupResource{Resource: "persistentvolumes"}:
		steps = append(steps, finalizer("kubernetes.io/pv-protection", obj)...)
	case schema.GroupResource{Group: "storage.k8s.io", Resource: "volumeattributesclasses"}:
		steps = append(steps, finalizer("kubernetes.io/vac-protection", obj)...)
	case schema.GroupResource{Group: "networking.k8s.io", Resource: "ingresses"}:
		_, hasClass, _ := unstructured.NestedFieldNoCopy(obj.Object, "spec", "ingressClassName")
		_, hasAnnotation := obj.GetAnnotations()["kubernetes.io/ingress.class"]
		if !hasClass && !hasAnnotation {
			if def := newestDefault(c.IngressClasses, "ingressclass.kubernetes.io/is-default-class"); def != "" {
				steps = append(steps, v1alpha1.AdmissionStep{Kind: v1alpha1.BuiltinPlugin, Name: "DefaultIngressClass", Effect: v1alpha1.EffectMutates,
					Ops: []v1alpha1.AdmissionOp{{Op: v1alpha1.OpSet, Path: []string{"spec", "ingressClassName"}, Value: def}}})
			}
		}
	}
	return steps
}

const notReadyTaint = "node.kubernetes.io/not-ready"

// hasTaint tells whether a node has a taint of key and effect.
func hasTaint(node *unstructured.Unstructured, key, effect string) bool {
	taints, _, _ := unstructured.NestedSlice(node.Object, "spec", "taints")
	for _, t := range taints {
		m, _ := t.(map[string]any)
		if m["key"] == key && m["effect"] == effect {
			return true
		}
	}
	return false
}

// finalizer is StorageObjectInUseProtection adding its finalizer.
func finalizer(name string, obj *unstructured.Unstructured) []v1alpha1.AdmissionStep {
	for _, f := range obj.GetFinalizers() {
		if f == name {
			return nil
		}
	}
	return []v1alpha1.AdmissionStep{{Kind: v1alpha1.BuiltinPlugin, Name: "StorageObjectInUseProtection", Effect: v1alpha1.EffectMutates,
		Ops: []v1alpha1.AdmissionOp{{Op: v1alpha1.OpAppend, Path: []string{"metadata", "finalizers"}, Value: name}}}}
}
