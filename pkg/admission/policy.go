package admission

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	smdschema "sigs.k8s.io/structured-merge-diff/v6/schema"
)

// PolicyEvaluator evaluates admission policies' CEL for one request, with
// the apiserver's own admission code. It runs in a companion executable
// (ssa-admission-eval): the apiserver's CEL stack costs every command
// about 6 ms and 8 MiB to start, so the main binary does not link it
// and pays for it only when a policy matches.
type PolicyEvaluator interface {
	EvaluatePolicies(req *PolicyRequest) (*PolicyResult, error)
}

// PolicyRequestKind and PolicyAPIVersion name the protocol between
// kubectl-ssa and its evaluator.
const (
	PolicyRequestKind = "PolicyEvaluationRequest"
	PolicyResultKind  = "PolicyEvaluationResult"
	PolicyAPIVersion  = "ssa.kubectl-ssa.io/v1alpha1"
)

// GroupVersionResource is a resource as the protocol writes it.
type GroupVersionResource struct {
	Group    string `json:"group"`
	Version  string `json:"version"`
	Resource string `json:"resource"`
}

// UserInfo is who sends the apply (the SelfSubjectReview of the
// credentials in use).
type UserInfo struct {
	Username string              `json:"username"`
	UID      string              `json:"uid,omitempty"`
	Groups   []string            `json:"groups,omitempty"`
	Extra    map[string][]string `json:"extra,omitempty"`
}

// ParamSet is the objects of one paramKind the bindings may select,
// listed by the caller in the namespaces they name.
type ParamSet struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Resource   string `json:"resource"`
	Namespaced bool   `json:"namespaced"`
	// Items are the objects read; Unreadable says why they could not
	// be (the evaluation is then not known).
	Items      []*unstructured.Unstructured `json:"items"`
	Unreadable string                       `json:"unreadable,omitempty"`
}

// PolicyRequest is one apply as the policies see it.
type PolicyRequest struct {
	Kind       string `json:"kind"`
	APIVersion string `json:"apiVersion"`
	// Operation is CREATE or UPDATE.
	Operation   string                     `json:"operation"`
	Object      *unstructured.Unstructured `json:"object"`
	OldObject   *unstructured.Unstructured `json:"oldObject,omitempty"`
	Resource    GroupVersionResource       `json:"resource"`
	Subresource string                     `json:"subresource,omitempty"`
	Namespaced  bool                       `json:"namespaced"`
	// Namespace is the object's Namespace (nil: cluster-scoped, or not
	// readable: NamespaceUnknown).
	Namespace        *unstructured.Unstructured `json:"namespace,omitempty"`
	NamespaceUnknown bool                       `json:"namespaceUnknown,omitempty"`
	// UserInfo nil: the user is not known (expressions that read it are
	// not evaluable).
	UserInfo *UserInfo `json:"userInfo,omitempty"`
	// FieldManager is the apply's, for request.options.
	FieldManager string `json:"fieldManager"`
	Force        bool   `json:"force,omitempty"`
	// ServerMinor is the apiserver's Kubernetes minor (0: not known): the
	// CEL environment is the one it compiles stored expressions with.
	ServerMinor int `json:"serverMinor,omitempty"`
	// Schema and TypeName type the object for mutating policies'
	// ApplyConfiguration patches (nil: not known; those mutations are
	// then not evaluable).
	Schema   *smdschema.Schema `json:"schema,omitempty"`
	TypeName string            `json:"typeName,omitempty"`

	ValidatingPolicies []*unstructured.Unstructured `json:"validatingPolicies"`
	ValidatingBindings []*unstructured.Unstructured `json:"validatingBindings"`
	MutatingPolicies   []*unstructured.Unstructured `json:"mutatingPolicies"`
	MutatingBindings   []*unstructured.Unstructured `json:"mutatingBindings"`
	Params             []ParamSet                   `json:"params"`
}

// Outcome is what one policy binding did to the request.
type Outcome string

// The outcomes.
const (
	// Admitted: every validation held (or the policy's match conditions
	// left the request out).
	Admitted Outcome = "admitted"
	// Denied: a validation failed under a Deny action, or the policy
	// failed under failurePolicy Fail.
	Denied Outcome = "denied"
	// Warned and Audited: a validation failed under Warn or Audit only.
	Warned  Outcome = "warned"
	Audited Outcome = "audited"
	// Mutated: a mutating policy changed the object.
	Mutated Outcome = "mutated"
	// Unchanged: a mutating policy ran and changed nothing.
	Unchanged Outcome = "unchanged"
	// NotEvaluable: the evaluation needs what is not known here (the
	// authorizer, the user, a param that could not be read).
	NotEvaluable Outcome = "not-evaluable"
)

// BindingResult is the outcome of one policy through one binding.
type BindingResult struct {
	Kind    StepKind `json:"kind"`
	Policy  string   `json:"policy"`
	Binding string   `json:"binding"`
	Outcome Outcome  `json:"outcome"`
	// Messages are the failed validations' messages (as the server
	// words them in its warnings and denials), or why it is not
	// evaluable.
	Messages []string `json:"messages,omitempty"`
	// Paths are the paths a mutating policy changed (set, or removed).
	Paths [][]string `json:"paths,omitempty"`
}

// PolicyResult is what the policies do to a PolicyRequest, in the
// apiserver's order: mutating policies (reinvoked as the apiserver
// reinvokes them), then validating ones on the mutated object.
type PolicyResult struct {
	Kind       string `json:"kind"`
	APIVersion string `json:"apiVersion"`
	// Object is the object after the mutating policies (nil: none
	// changed it).
	Object *unstructured.Unstructured `json:"object,omitempty"`
	// Denied is the server's error message when a policy denies; Code
	// its HTTP status.
	Denied string `json:"denied,omitempty"`
	Code   int32  `json:"code,omitempty"`
	// Warnings are the warnings the server returns.
	Warnings []string `json:"warnings"`
	// AuditAnnotations are the annotations the policies add to the
	// audit event.
	AuditAnnotations map[string]string `json:"auditAnnotations,omitempty"`
	Bindings         []BindingResult   `json:"bindings"`
	// NotEvaluable says what could not be evaluated (the answer is then
	// not exact).
	NotEvaluable []string `json:"notEvaluable,omitempty"`
}
