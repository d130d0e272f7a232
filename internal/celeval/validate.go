package celeval

import (
	"context"
	"encoding/json"
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/version"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/policy/generic"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions"
	"k8s.io/apiserver/pkg/cel/environment"
	"k8s.io/apiserver/pkg/warning"

	ssaadmission "github.com/kubectl-ssa/kubectl-ssa/pkg/admission"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
)

// validationFailureAnnotation is the audit annotation the validating
// dispatcher writes for failures under the Audit action.
const validationFailureAnnotation = "validation.policy.admission.k8s.io/validation_failure"

// envSet is the CEL environment the server compiles stored expressions
// with: its minor's compatibility version (one minor back), or this
// build's when the minor is not known.
func (e *evaluation) envSet() *environment.EnvSet {
	if e.env == nil {
		// Built once, as the apiserver builds its template once.
		if m := e.req.ServerMinor; m > 1 {
			e.env = environment.MustBaseEnvSet(version.MajorMinor(1, uint(m-1)))
		} else {
			e.env = environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion())
		}
	}
	return e.env
}

// compileValidating compiles a policy as the apiserver's validating
// plugin does (its compilePolicy, which is not exported).
func (e *evaluation) compileValidating(policy *admissionregistrationv1.ValidatingAdmissionPolicy) validating.Validator {
	hasParam := policy.Spec.ParamKind != nil
	optionalVars := plugincel.OptionalVariableDeclarations{HasParams: hasParam, HasAuthorizer: true}
	expressionOptionalVars := plugincel.OptionalVariableDeclarations{HasParams: hasParam, HasAuthorizer: false}
	failurePolicy := policy.Spec.FailurePolicy
	compiler, err := plugincel.NewCompositedCompiler(e.envSet())
	if err != nil {
		return validating.NewValidator(nil, nil, nil, nil, failurePolicy, err)
	}
	matcher := variablesAndConditions(compiler, policy.Spec.Variables, policy.Spec.MatchConditions, optionalVars, failurePolicy, policy.Name)
	validations := make([]plugincel.ExpressionAccessor, len(policy.Spec.Validations))
	messages := make([]plugincel.ExpressionAccessor, len(policy.Spec.Validations))
	for i, v := range policy.Spec.Validations {
		validations[i] = &validating.ValidationCondition{Expression: v.Expression, Message: v.Message, Reason: v.Reason}
		if v.MessageExpression != "" {
			messages[i] = &validating.MessageExpressionCondition{MessageExpression: v.MessageExpression}
		}
	}
	audits := make([]plugincel.ExpressionAccessor, len(policy.Spec.AuditAnnotations))
	for i, a := range policy.Spec.AuditAnnotations {
		audits[i] = &validating.AuditAnnotationCondition{Key: a.Key, ValueExpression: a.ValueExpression}
	}
	return validating.NewValidator(
		compiler.CompileCondition(validations, optionalVars, environment.StoredExpressions),
		matcher,
		compiler.CompileCondition(audits, optionalVars, environment.StoredExpressions),
		compiler.CompileCondition(messages, expressionOptionalVars, environment.StoredExpressions),
		failurePolicy,
		nil,
	)
}

// variablesAndConditions compiles a policy's variables into compiler and
// its matchConditions into a matcher (nil: none), as both policy plugins
// do.
func variablesAndConditions(compiler *plugincel.CompositedCompiler, vars []admissionregistrationv1.Variable, conds []admissionregistrationv1.MatchCondition,
	opts plugincel.OptionalVariableDeclarations, failurePolicy *admissionregistrationv1.FailurePolicyType, name string) matchconditions.Matcher {
	variables := make([]plugincel.NamedExpressionAccessor, len(vars))
	for i, v := range vars {
		variables[i] = &validating.Variable{Name: v.Name, Expression: v.Expression}
	}
	compiler.CompileAndStoreVariables(variables, opts, environment.StoredExpressions)
	if len(conds) == 0 {
		return nil
	}
	accessors := make([]plugincel.ExpressionAccessor, len(conds))
	for i := range conds {
		accessors[i] = (*matchconditions.MatchCondition)(&conds[i])
	}
	return matchconditions.NewMatcher(compiler.CompileCondition(accessors, opts, environment.StoredExpressions), failurePolicy, "policy", "validate", name)
}

// validate runs the validating policies on obj: each binding on its
// own, for what each did, and all of them together, for the server's
// answer.
func (e *evaluation) validate(ctx context.Context, obj *unstructured.Unstructured, res *ssaadmission.PolicyResult) error {
	names, bindings := bindingsOf(e.req.ValidatingPolicies, e.req.ValidatingBindings)
	policies := byName(e.req.ValidatingPolicies)
	var all []validating.PolicyHook
	for _, name := range names {
		p, err := decodePolicy[admissionregistrationv1.ValidatingAdmissionPolicy](policies[name])
		if err != nil {
			return err
		}
		defaultMatch(p.Spec.MatchConstraints)
		defaultFailurePolicy(&p.Spec.FailurePolicy)
		informer, scope, unreadable := e.paramsOf(p.Spec.ParamKind)
		evaluator := e.compileValidating(p)
		var bs []*admissionregistrationv1.ValidatingAdmissionPolicyBinding
		for _, u := range bindings[name] {
			b, err := decodePolicy[admissionregistrationv1.ValidatingAdmissionPolicyBinding](u)
			if err != nil {
				return err
			}
			defaultMatch(b.Spec.MatchResources)
			bs = append(bs, b)
		}
		if len(bs) == 0 {
			continue
		}
		hook := validating.PolicyHook{Policy: p, Bindings: nil, ParamInformer: informer, ParamScope: scope, Evaluator: evaluator}
		for _, b := range bs {
			one := hook
			one.Bindings = []*admissionregistrationv1.ValidatingAdmissionPolicyBinding{b}
			if br := e.validateOne(ctx, obj, one, unreadable); br != nil {
				res.Bindings = append(res.Bindings, *br)
				if br.Outcome == ssaadmission.NotEvaluable {
					res.NotEvaluable = append(res.NotEvaluable, fmt.Sprintf("ValidatingAdmissionPolicy %s (binding %s): %s", p.Name, b.Name, br.Messages[0]))
					// What it does is not known: the server's answer is
					// made of the others.
					continue
				}
			}
			hook.Bindings = append(hook.Bindings, b)
		}
		if len(hook.Bindings) > 0 {
			all = append(all, hook)
		}
	}
	if len(all) == 0 {
		return nil
	}
	w := &warnings{}
	attrs := e.attributes(obj.DeepCopy())
	err := e.dispatchValidating(warning.WithWarningRecorder(ctx, w), attrs, all, &unknowable{})
	if err != nil {
		res.Denied, res.Code = statusOf(err)
	}
	res.Warnings = append(res.Warnings, w.list...)
	for k, v := range attrs.annotations {
		if res.AuditAnnotations == nil {
			res.AuditAnnotations = map[string]string{}
		}
		res.AuditAnnotations[k] = v
	}
	return nil
}

func (e *evaluation) dispatchValidating(ctx context.Context, attrs *recorded, hooks []validating.PolicyHook, authz *unknowable) error {
	d := validating.NewDispatcher(authz, generic.NewPolicyMatcher(e.matcher))
	return d.Dispatch(ctx, attrs, e.objects, hooks)
}

// validateOne is what one binding does (nil: it does not select the
// request).
func (e *evaluation) validateOne(ctx context.Context, obj *unstructured.Unstructured, hook validating.PolicyHook, unreadable string) *ssaadmission.BindingResult {
	p, b := hook.Policy, hook.Bindings[0]
	br := &ssaadmission.BindingResult{Kind: v1alpha1.ValidatingAdmissionPolicy, Policy: p.Name, Binding: b.Name}
	pm := generic.NewPolicyMatcher(e.matcher)
	attrs := e.attributes(obj.DeepCopy())
	if ok, _, _, err := pm.DefinitionMatches(attrs, e.objects, validating.NewValidatingAdmissionPolicyAccessor(p)); err == nil && !ok {
		return nil
	}
	if ok, err := pm.BindingMatches(attrs, e.objects, validating.NewValidatingAdmissionPolicyBindingAccessor(b)); err == nil && !ok {
		return nil
	}
	switch {
	case unreadable != "" && b.Spec.ParamRef != nil:
		br.Outcome, br.Messages = ssaadmission.NotEvaluable, []string{"its params could not be read: " + unreadable}
		return br
	case e.req.UserInfo == nil && usesUser(p.Spec):
		br.Outcome, br.Messages = ssaadmission.NotEvaluable, []string{"it reads request.userInfo, and who you are could not be read (SelfSubjectReview)"}
		return br
	case e.req.NamespaceUnknown && e.req.Namespaced:
		br.Outcome, br.Messages = ssaadmission.NotEvaluable, []string{"the object's namespace could not be read"}
		return br
	}
	w := &warnings{}
	authz := &unknowable{}
	err := e.dispatchValidating(warning.WithWarningRecorder(ctx, w), attrs, []validating.PolicyHook{hook}, authz)
	switch {
	case authz.wasCalled():
		br.Outcome, br.Messages = ssaadmission.NotEvaluable, []string{"it asks the authorizer, which only the server can answer"}
	case err != nil:
		msg, _ := statusOf(err)
		br.Outcome, br.Messages = ssaadmission.Denied, []string{msg}
	case len(w.list) > 0:
		br.Outcome, br.Messages = ssaadmission.Warned, w.list
	case attrs.annotations[validationFailureAnnotation] != "":
		br.Outcome, br.Messages = ssaadmission.Audited, auditedMessages(attrs.annotations[validationFailureAnnotation])
	default:
		br.Outcome = ssaadmission.Admitted
	}
	return br
}

// auditedMessages are the messages of the failures the validating
// dispatcher writes into its audit annotation (a JSON list), or the
// annotation as it is when it is not one.
func auditedMessages(annotation string) []string {
	var failures []validating.ValidationFailureValue
	if err := json.Unmarshal([]byte(annotation), &failures); err != nil || len(failures) == 0 {
		return []string{annotation}
	}
	out := make([]string, len(failures))
	for i, f := range failures {
		out[i] = f.Message
	}
	return out
}
