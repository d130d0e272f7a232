package celeval

import (
	"context"
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/admission"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/webhook"

	ssaadmission "github.com/kubectl-ssa/kubectl-ssa/pkg/admission"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/defaults"
)

// webhooks decides, as the apiserver's webhook dispatcher does
// (ShouldCallHook), whether each webhook's matchConditions let the
// server call it; the request matches them otherwise (the caller
// matched rules and selectors). obj is the object the webhook phase
// sees: after the mutating policies for mutating webhooks and the
// validating ones.
func (e *evaluation) webhooks(ctx context.Context, obj *unstructured.Unstructured, res *ssaadmission.PolicyResult) error {
	compiler := plugincel.NewConditionCompiler(e.envSet())
	for _, w := range e.req.Webhooks {
		var accessor webhook.WebhookAccessor
		switch w.Kind {
		case v1alpha1.MutatingWebhook:
			var h admissionregistrationv1.MutatingWebhook
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(defaults.Normalize(w.Webhook).(map[string]any), &h); err != nil {
				return fmt.Errorf("decoding webhook %s/%v: %w", w.Configuration, w.Webhook["name"], err)
			}
			defaultFailurePolicy(&h.FailurePolicy)
			accessor = webhook.NewMutatingWebhookAccessor(w.Configuration, w.Configuration, &h)
		default:
			var h admissionregistrationv1.ValidatingWebhook
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(defaults.Normalize(w.Webhook).(map[string]any), &h); err != nil {
				return fmt.Errorf("decoding webhook %s/%v: %w", w.Configuration, w.Webhook["name"], err)
			}
			defaultFailurePolicy(&h.FailurePolicy)
			accessor = webhook.NewValidatingWebhookAccessor(w.Configuration, w.Configuration, &h)
		}
		wr := ssaadmission.WebhookResult{Kind: w.Kind, Name: w.Configuration + "/" + accessor.GetName(), Called: true}
		if e.req.UserInfo == nil && usesUser(accessor.GetMatchConditions()) {
			wr.NotEvaluable = "its matchConditions read request.userInfo, and who you are could not be read (SelfSubjectReview)"
			res.Webhooks = append(res.Webhooks, wr)
			continue
		}
		attrs := e.attributes(obj.DeepCopy())
		versioned, err := admission.NewVersionedAttributes(attrs, e.gvk, e.objects)
		if err != nil {
			return err
		}
		authz := &unknowable{}
		result := accessor.GetCompiledMatcher(compiler).Match(ctx, versioned, nil, authz)
		switch {
		case authz.wasCalled():
			wr.NotEvaluable = "its matchConditions ask the authorizer, which only the server can answer"
		case result.Error != nil:
			wr.Called = false
			wr.Denied = apierrors.NewForbidden(e.gvr.GroupResource(), obj.GetName(), result.Error).Error()
		case !result.Matches:
			wr.Called = false
		}
		res.Webhooks = append(res.Webhooks, wr)
	}
	return nil
}
