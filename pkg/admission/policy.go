package admission

import (
	"encoding/base64"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/pathlang"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/schemacodec"
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
	// Schema (a structured-merge-diff schema, in pkg/schemacodec's form:
	// its Atom's embedded List and Map share JSON names) and TypeName type the
	// object for mutating policies (none: not known; they are then not
	// evaluable).
	Schema   []byte `json:"schema,omitempty"`
	TypeName string `json:"typeName,omitempty"`

	ValidatingPolicies []*unstructured.Unstructured `json:"validatingPolicies"`
	ValidatingBindings []*unstructured.Unstructured `json:"validatingBindings"`
	MutatingPolicies   []*unstructured.Unstructured `json:"mutatingPolicies"`
	MutatingBindings   []*unstructured.Unstructured `json:"mutatingBindings"`
	Params             []ParamSet                   `json:"params"`
	// Webhooks are the webhooks that match but for their matchConditions,
	// which the evaluation decides.
	Webhooks []WebhookRequest `json:"webhooks,omitempty"`
}

// WebhookRequest is one webhook whose matchConditions decide whether the
// server calls it.
type WebhookRequest struct {
	Kind          v1alpha1.AdmissionStepKind `json:"kind"`
	Configuration string                     `json:"configuration"`
	Webhook       map[string]any             `json:"webhook"`
}

// WebhookResult is whether the server calls a webhook: Called, or not
// (its matchConditions leave the request out), or Denied (they failed
// to evaluate under failurePolicy Fail: the server refuses the request).
type WebhookResult struct {
	Kind   v1alpha1.AdmissionStepKind `json:"kind"`
	Name   string                     `json:"name"`
	Called bool                       `json:"called"`
	Denied string                     `json:"denied,omitempty"`
	// NotEvaluable says why it can't be known here.
	NotEvaluable string `json:"notEvaluable,omitempty"`
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
	Kind    v1alpha1.AdmissionStepKind `json:"kind"`
	Policy  string                     `json:"policy"`
	Binding string                     `json:"binding"`
	Outcome Outcome                    `json:"outcome"`
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
	// DeniedInMutation: the mutating phase refused it (a mutating
	// policy, or a mutating webhook's matchConditions).
	DeniedInMutation bool `json:"deniedInMutation,omitempty"`
	// Warnings are the warnings the server returns.
	Warnings []string `json:"warnings"`
	// AuditAnnotations are the annotations the policies add to the
	// audit event.
	AuditAnnotations map[string]string `json:"auditAnnotations,omitempty"`
	Bindings         []BindingResult   `json:"bindings"`
	Webhooks         []WebhookResult   `json:"webhooks,omitempty"`
	// NotEvaluable says what could not be evaluated (the answer is then
	// not exact).
	NotEvaluable []string `json:"notEvaluable,omitempty"`
}

// evaluatePolicies has c.Policies evaluate the policies that match req,
// on the object as the built-in plugins before them leave it.
func evaluatePolicies(c *Config, req Request, obj *unstructured.Unstructured, hooks []v1alpha1.AdmissionStep) (*PolicyResult, error) {
	pr := &PolicyRequest{
		Kind: PolicyRequestKind, APIVersion: PolicyAPIVersion,
		Operation: req.Operation(), Object: obj, OldObject: req.Old,
		Resource:     GroupVersionResource{Group: req.Resource.Group, Version: req.Resource.Version, Resource: req.Resource.Resource},
		Subresource:  req.Subresource,
		Namespaced:   req.Namespaced,
		FieldManager: req.FieldManager,
		ServerMinor:  req.ServerMinor,
		TypeName:     req.TypeName,
	}
	if req.Schema != nil && len(c.MutatingPolicies) > 0 {
		b, err := schemacodec.Encode(req.Schema)
		if err != nil {
			return nil, fmt.Errorf("encoding the schema of %s: %w", req.Object.GroupVersionKind(), err)
		}
		pr.Schema = b
	}
	bound(c.MutatingPolicies, c.MutatingBindings, req, func(p, b *unstructured.Unstructured, _ []string) {
		pr.MutatingPolicies = appendOnce(pr.MutatingPolicies, p)
		pr.MutatingBindings = append(pr.MutatingBindings, b)
	})
	bound(c.ValidatingPolicies, c.ValidatingBindings, req, func(p, b *unstructured.Unstructured, _ []string) {
		pr.ValidatingPolicies = appendOnce(pr.ValidatingPolicies, p)
		pr.ValidatingBindings = append(pr.ValidatingBindings, b)
	})
	for _, h := range hooks {
		if h.Webhook != nil {
			pr.Webhooks = append(pr.Webhooks, WebhookRequest{Kind: h.Kind, Configuration: h.Configuration, Webhook: h.Webhook})
		}
	}
	res, err := c.Policies.EvaluatePolicies(pr)
	if err != nil || res.Object == nil || res.DeniedInMutation || req.Default == nil || len(pr.ValidatingPolicies)+len(pr.Webhooks) == 0 {
		return res, err
	}
	// The server defaults what the mutating policies changed before it
	// validates it: the validating phase again, on that object.
	mutated := res.Object.DeepCopy()
	req.Default(mutated)
	again := *pr
	again.Object, again.MutatingPolicies, again.MutatingBindings, again.Schema = mutated, nil, nil, nil
	validated, err := c.Policies.EvaluatePolicies(&again)
	if err != nil {
		return nil, err
	}
	merged := *validated
	merged.Object = res.Object
	merged.Bindings = nil
	for _, b := range res.Bindings {
		if b.Kind == v1alpha1.MutatingAdmissionPolicy {
			merged.Bindings = append(merged.Bindings, b)
		}
	}
	merged.Bindings = append(merged.Bindings, validated.Bindings...)
	for _, why := range res.NotEvaluable {
		if strings.HasPrefix(why, string(v1alpha1.MutatingAdmissionPolicy)) {
			merged.NotEvaluable = append(merged.NotEvaluable, why)
		}
	}
	return &merged, nil
}

// Evaluates tells whether Evaluate would have c.Policies evaluate req: a
// policy, or a webhook with matchConditions, matches it.
func Evaluates(c *Config, req Request) bool {
	if c.Policies == nil || exempt(req.Object) {
		return false
	}
	return len(mutatingPolicies(c, req))+len(validatingPolicies(c, req)) > 0 ||
		conditional(webhooks(c.MutatingWebhooks, v1alpha1.MutatingWebhook, req)) || conditional(webhooks(c.ValidatingWebhooks, v1alpha1.ValidatingWebhook, req))
}

// conditional tells whether a matched webhook has matchConditions.
func conditional(hooks []v1alpha1.AdmissionStep) bool {
	for _, h := range hooks {
		if h.Webhook != nil {
			return true
		}
	}
	return false
}

// calledWebhooks are the webhooks the evaluation of their matchConditions
// leaves called (with why it could not say, when it could not), and the
// denial of one whose conditions failed under failurePolicy Fail.
func calledWebhooks(hooks []v1alpha1.AdmissionStep, res *PolicyResult) ([]v1alpha1.AdmissionStep, string) {
	var out []v1alpha1.AdmissionStep
	denied := ""
	for _, h := range hooks {
		var wr *WebhookResult
		for i := range res.Webhooks {
			if res.Webhooks[i].Kind == h.Kind && res.Webhooks[i].Name == h.Name {
				wr = &res.Webhooks[i]
			}
		}
		if wr == nil || h.Webhook == nil {
			out = append(out, h)
			continue
		}
		var caveats []string
		for _, c := range h.Caveats {
			if !strings.Contains(c, "matchConditions (CEL) were not evaluated") {
				caveats = append(caveats, c)
			}
		}
		switch {
		case wr.NotEvaluable != "":
			h.Caveats = append(caveats, wr.NotEvaluable)
		case wr.Denied != "":
			h.Effect, h.Message, h.Caveats = v1alpha1.EffectDenies, wr.Denied, caveats
			if denied == "" {
				denied = wr.Denied
			}
		case !wr.Called:
			// Its matchConditions leave the request out: not called.
			continue
		default:
			h.Caveats = append(caveats, "its matchConditions hold: it is called")
		}
		out = append(out, h)
	}
	return out, denied
}

// policyObject is the object policies see: with the apiserver's
// defaults, the built-in plugins' changes of r, a Secret's stringData
// written into its data (the server never stores stringData).
func policyObject(req Request, r *v1alpha1.AdmissionReport) *unstructured.Unstructured {
	var obj *unstructured.Unstructured
	if req.Defaulted != nil {
		obj = req.Defaulted()
	}
	if obj == nil {
		obj = req.Object
	}
	obj = obj.DeepCopy()
	Apply(&v1alpha1.AdmissionReport{Steps: r.Steps}, obj)
	if gvk := obj.GroupVersionKind(); gvk.Group == "" && gvk.Kind == "Secret" {
		if sd, ok := obj.Object["stringData"].(map[string]any); ok {
			data, _ := obj.Object["data"].(map[string]any)
			if data == nil {
				data = map[string]any{}
			}
			for k, v := range sd {
				s, _ := v.(string)
				data[k] = base64.StdEncoding.EncodeToString([]byte(s))
			}
			obj.Object["data"] = data
			delete(obj.Object, "stringData")
		}
	}
	return obj
}

// SetBy names the last step whose ops set or changed p or a field above
// it ("" when none did): "KIND NAME".
func SetBy(r *v1alpha1.AdmissionReport, p fieldpath.Path) string {
	if r == nil {
		return ""
	}
	by := ""
	for _, s := range r.Steps {
		for _, op := range s.Ops {
			if op.Op == v1alpha1.OpRemove {
				continue
			}
			if at := pathlang.FromSegments(op.Path).Elements(); len(at) <= len(p) && p[:len(at)].Equals(at) {
				by = fmt.Sprintf("%s %s", s.Kind, s.Name)
			}
		}
	}
	return by
}

// RedactSecrets hides, for a Secret, the values the steps' ops set in its
// data, stringData or last-applied annotation (Apply has used them).
func RedactSecrets(r *v1alpha1.AdmissionReport) {
	if r == nil {
		return
	}
	for i := range r.Steps {
		for j := range r.Steps[i].Ops {
			op := &r.Steps[i].Ops[j]
			op.Value = ownership.RedactValue(pathlang.FromSegments(op.Path).Elements(), op.Value)
		}
	}
}

// mayMutate names the first mutating webhook of hooks that may change
// the object ("": none).
func mayMutate(hooks []v1alpha1.AdmissionStep) string {
	for _, h := range hooks {
		if h.Effect == v1alpha1.EffectMayMutate {
			return fmt.Sprintf("%s %s", h.Kind, h.Name)
		}
	}
	return ""
}

// evaluatedAs says what the evaluation found of a matched step.
func evaluatedAs(s v1alpha1.AdmissionStep, res *PolicyResult) string {
	for _, b := range res.Bindings {
		if b.Kind == s.Kind && fmt.Sprintf("%s (binding %s)", b.Policy, b.Binding) == s.Name {
			if len(b.Messages) > 0 {
				return string(b.Outcome) + ": " + strings.Join(b.Messages, "; ")
			}
			return string(b.Outcome)
		}
	}
	return "its match conditions leave it out"
}

func appendOnce(list []*unstructured.Unstructured, u *unstructured.Unstructured) []*unstructured.Unstructured {
	for _, have := range list {
		if have == u {
			return list
		}
	}
	return append(list, u)
}

// evaluatedSteps replaces matched steps by what the evaluation says they
// do; a step it could not evaluate stays matched, with why.
// before is the object the policies saw: what was absent there is set.
func evaluatedSteps(matched []v1alpha1.AdmissionStep, res *PolicyResult, before *unstructured.Unstructured) []v1alpha1.AdmissionStep {
	out := make([]v1alpha1.AdmissionStep, 0, len(matched))
	for _, s := range matched {
		var br *BindingResult
		for i := range res.Bindings {
			b := &res.Bindings[i]
			if b.Kind == s.Kind && fmt.Sprintf("%s (binding %s)", b.Policy, b.Binding) == s.Name {
				br = b
				break
			}
		}
		policy, _, _ := strings.Cut(s.Name, " (binding ")
		if br == nil {
			// Not evaluated: why, when the evaluation says.
			for _, why := range res.NotEvaluable {
				// Said of the step: without its name again.
				for _, prefix := range []string{fmt.Sprintf("%s %s: ", s.Kind, policy), fmt.Sprintf("%s %s: ", s.Kind, s.Name)} {
					if rest, ok := strings.CutPrefix(why, prefix); ok {
						s.Caveats = append(s.Caveats, rest)
						break
					}
				}
			}
			if s.Kind == v1alpha1.ValidatingAdmissionPolicy && len(s.Caveats) == 0 {
				// Its match conditions leave the request out.
				continue
			}
			out = append(out, s)
			continue
		}
		s.Caveats = nil
		switch br.Outcome {
		case Denied:
			s.Effect, s.Message = v1alpha1.EffectDenies, strings.Join(br.Messages, "; ")
		case Warned:
			s.Effect, s.Message = v1alpha1.EffectWarns, strings.Join(br.Messages, "; ")
		case Audited:
			s.Effect, s.Message = v1alpha1.EffectAudits, strings.Join(br.Messages, "; ")
		case Admitted, Unchanged:
			s.Effect = v1alpha1.EffectAdmits
		case Mutated:
			s.Effect = v1alpha1.EffectMutates
			for _, p := range br.Paths {
				if res.Object == nil {
					break
				}
				if v, found, _ := unstructured.NestedFieldNoCopy(res.Object.Object, p...); found {
					s.Ops = append(s.Ops, changeOps(before.Object, p, v)...)
				} else {
					s.Ops = append(s.Ops, v1alpha1.AdmissionOp{Op: v1alpha1.OpRemove, Path: p})
				}
			}
		case NotEvaluable:
			s.Caveats = br.Messages
		}
		out = append(out, s)
	}
	return out
}
