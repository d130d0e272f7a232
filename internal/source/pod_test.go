package source

import (
	"context"
	"strings"
	"sync"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubectl-ssa/kubectl-ssa/internal/kube"
)

func u(apiVersion, kind, ns, name string, fields map[string]any) *unstructured.Unstructured {
	obj := map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": map[string]any{"name": name, "namespace": ns}}
	for k, v := range fields {
		obj[k] = v
	}
	return &unstructured.Unstructured{Object: obj}
}

// podReads (plumbing, over a fake client): the reads side by side, once a
// run; a missing object is none, a forbidden read is said by the plugin
// that needed it; what the input applies first stands in for the
// cluster's, and makes --verify unable to check the Pod.
func TestPodReads(t *testing.T) {
	pc := u("scheduling.k8s.io/v1", "PriorityClass", "", "low", map[string]any{"value": int64(1), "globalDefault": true})
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		priorityClassesGVR: "PriorityClassList", limitRangesGVR: "LimitRangeList", serviceAccountsGVR: "ServiceAccountList", runtimeClassesGVR: "RuntimeClassList",
	}, pc)
	var mu sync.Mutex
	var asked []string
	dyn.PrependReactor("*", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
		mu.Lock()
		asked = append(asked, a.GetVerb()+" "+a.GetResource().Resource)
		mu.Unlock()
		if a.GetResource().Resource == "limitranges" {
			return true, nil, apierrors.NewForbidden(a.GetResource().GroupResource(), "", nil)
		}
		return false, nil, nil
	})
	s := &Cluster{Cluster: &kube.Cluster{Dynamic: dyn}}
	pod := u("v1", "Pod", "ns", "p", map[string]any{"spec": map[string]any{"runtimeClassName": "gvisor"}})
	reads := s.podReads(context.Background(), pod)
	if reads.ServiceAccount != nil || reads.RuntimeClass != nil || len(reads.PriorityClasses) != 1 {
		t.Errorf("reads: %+v", reads)
	}
	if why := reads.Unread["LimitRanger"]; !strings.Contains(why, "could not list limitranges in namespace ns (forbidden: check with kubectl auth can-i list limitranges -n ns)") || len(reads.Unread) != 1 {
		t.Errorf("unread: %q", reads.Unread)
	}
	s.podReads(context.Background(), pod)
	if len(asked) != 4 {
		t.Errorf("asked %q: want each once", asked)
	}

	// The input applies the service account and a LimitRange first.
	if why := s.podUnverifiable(pod); why != "" {
		t.Errorf("unverifiable without input: %q", why)
	}
	for _, obj := range []*unstructured.Unstructured{
		u("v1", "ServiceAccount", "ns", "default", nil),
		u("v1", "ServiceAccount", "other", "default", nil),
		u("v1", "LimitRange", "ns", "limits", map[string]any{"spec": map[string]any{
			"limits": []any{map[string]any{"type": "Container", "max": map[string]any{"cpu": "1"}}}}}),
	} {
		s.NoteApplied(obj, obj)
	}
	reads = s.podReads(context.Background(), pod)
	if reads.ServiceAccount == nil || reads.ServiceAccount.GetNamespace() != "ns" || len(reads.LimitRanges) != 1 {
		t.Fatalf("input: %+v", reads)
	}
	limits, _, _ := unstructured.NestedSlice(reads.LimitRanges[0].Object, "spec", "limits")
	if d, _, _ := unstructured.NestedString(limits[0].(map[string]any), "default", "cpu"); d != "1" {
		t.Errorf("the input's LimitRange is not defaulted as stored: %v", limits)
	}
	if _, unread := reads.Unread["LimitRanger"]; !unread {
		t.Errorf("the cluster's LimitRanges, unread, are not known from the input's")
	}
	if why := s.podUnverifiable(pod); why != "the input applies LimitRange/ns/limits, ServiceAccount/ns/default before this Pod: the server's dry run, sent now, would not see it" {
		t.Errorf("unverifiable: %q", why)
	}

	// A namespace the input creates gets its default account from the
	// service account controller.
	s.NoteApplied(u("v1", "Namespace", "", "fresh", nil), u("v1", "Namespace", "", "fresh", nil))
	fresh := u("v1", "Pod", "fresh", "p", nil)
	if reads := s.podReads(context.Background(), fresh); reads.ServiceAccount == nil || reads.ServiceAccount.GetName() != "default" {
		t.Errorf("a new namespace's default account: %+v", reads.ServiceAccount)
	}
	named := u("v1", "Pod", "fresh", "q", map[string]any{"spec": map[string]any{"serviceAccountName": "robot"}})
	if reads := s.podReads(context.Background(), named); reads.ServiceAccount != nil {
		t.Errorf("a named account in a new namespace: %+v", reads.ServiceAccount)
	}
}
