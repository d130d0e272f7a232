package source

import (
	"context"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubectl-ssa/kubectl-ssa/internal/kube"
)

// listAdmission (plumbing, over a fake client): the lists side by side,
// bindings only where there are policies, what is forbidden in one line,
// a resource not served at v1 looked for at older versions.
func TestListAdmission(t *testing.T) {
	vap := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
		"metadata": map[string]any{"name": "p"}}}
	listKinds := map[schema.GroupVersionResource]string{}
	for r, k := range map[string]string{
		"validatingadmissionpolicies": "ValidatingAdmissionPolicyList", "validatingadmissionpolicybindings": "ValidatingAdmissionPolicyBindingList",
		"mutatingadmissionpolicies": "MutatingAdmissionPolicyList", "mutatingadmissionpolicybindings": "MutatingAdmissionPolicyBindingList",
		"validatingwebhookconfigurations": "ValidatingWebhookConfigurationList", "mutatingwebhookconfigurations": "MutatingWebhookConfigurationList",
	} {
		for _, v := range []string{"v1", "v1beta1", "v1alpha1"} {
			listKinds[schema.GroupVersionResource{Group: admissionGroup, Version: v, Resource: r}] = k
		}
	}
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), listKinds, vap)
	var asked []string
	dyn.PrependReactor("list", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
		gvr := a.GetResource()
		asked = append(asked, gvr.Resource+"@"+gvr.Version)
		switch {
		case strings.HasSuffix(gvr.Resource, "webhookconfigurations"):
			return true, nil, apierrors.NewForbidden(gvr.GroupResource(), "", nil)
		case strings.HasPrefix(gvr.Resource, "mutatingadmissionpolic") && gvr.Version != "v1alpha1":
			return true, nil, apierrors.NewNotFound(gvr.GroupResource(), "")
		}
		return false, nil, nil
	})
	s := &Cluster{Cluster: &kube.Cluster{Dynamic: dyn}}
	c := s.listAdmission(context.Background())
	if len(c.ValidatingPolicies) != 1 || len(c.ValidatingBindings) != 0 || len(c.MutatingPolicies) != 0 {
		t.Errorf("lists: %+v", c)
	}
	if len(c.Unreadable) != 1 || !strings.Contains(c.Unreadable[0], "mutatingwebhookconfigurations, validatingwebhookconfigurations of admissionregistration.k8s.io (forbidden") {
		t.Errorf("unreadable: %q", c.Unreadable)
	}
	got := strings.Join(asked, " ")
	for _, want := range []string{"validatingadmissionpolicybindings@v1", "mutatingadmissionpolicies@v1alpha1"} {
		if !strings.Contains(got, want) {
			t.Errorf("not asked %s: %s", want, got)
		}
	}
	if strings.Contains(got, "mutatingadmissionpolicybindings") {
		t.Errorf("bindings listed without policies: %s", got)
	}
}
