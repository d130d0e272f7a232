package kube

import (
	"errors"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery/cached/memory"
	fakediscovery "k8s.io/client-go/discovery/fake"
	clienttesting "k8s.io/client-go/testing"
)

// A kind at a version is mapped from its group-version's resources alone
// when one resource serves it there, as the discovery mapper maps it;
// anything else goes to the discovery mapper.
func TestDirectMapping(t *testing.T) {
	fake := &fakediscovery.FakeDiscovery{Fake: &clienttesting.Fake{}}
	fake.Resources = []*metav1.APIResourceList{
		{GroupVersion: "v1", APIResources: []metav1.APIResource{
			{Name: "configmaps", Kind: "ConfigMap", Namespaced: true},
			{Name: "namespaces", Kind: "Namespace"},
			{Name: "namespaces/status", Kind: "Namespace"},
		}},
		{GroupVersion: "example.com/v1", APIResources: []metav1.APIResource{
			{Name: "widgets", Kind: "Widget", Namespaced: true},
			{Name: "otherwidgets", Kind: "Widget", Namespaced: true},
		}},
	}
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}, meta.RESTScopeNamespace)
	c := &Cluster{Discovery: memory.NewMemCacheClient(fake), Mapper: mapper}

	for _, tc := range []struct {
		gvk      schema.GroupVersionKind
		resource string
		scope    meta.RESTScopeName
	}{
		{schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, "configmaps", meta.RESTScopeNameNamespace},
		// The status subresource serves the kind too: it is no mapping.
		{schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}, "namespaces", meta.RESTScopeNameRoot},
		// Two resources serve the kind: the discovery mapper decides.
		{schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}, "widgets", meta.RESTScopeNameNamespace},
	} {
		m, err := c.Mapping(tc.gvk)
		if err != nil {
			t.Fatalf("%s: %v", tc.gvk, err)
		}
		if m.Resource != tc.gvk.GroupVersion().WithResource(tc.resource) || m.GroupVersionKind != tc.gvk || m.Scope.Name() != tc.scope {
			t.Errorf("%s: mapped to %v %v %s, want %s %s", tc.gvk, m.Resource, m.GroupVersionKind, m.Scope.Name(), tc.resource, tc.scope)
		}
	}
	if m := c.directMapping(schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}); m != nil {
		t.Errorf("a kind two resources serve was mapped directly to %v", m.Resource)
	}
	// A kind the group-version does not serve is not served.
	var notServed *NotServedError
	if _, err := c.Mapping(schema.GroupVersionKind{Version: "v1", Kind: "Gadget"}); !errors.As(err, &notServed) {
		t.Errorf("an unknown kind: got %v, want NotServedError", err)
	}
}

// Resolved defaults a namespace from cached discovery alone: a kind it
// does not know, or a namespace -n refuses, is left to Resource, and
// discovery is not read again for it.
func TestResolvedDoesNotReadDiscoveryAgain(t *testing.T) {
	fake := &fakediscovery.FakeDiscovery{Fake: &clienttesting.Fake{}}
	fake.Resources = []*metav1.APIResourceList{
		{GroupVersion: "v1", APIResources: []metav1.APIResource{
			{Name: "configmaps", Kind: "ConfigMap", Namespaced: true},
			{Name: "namespaces", Kind: "Namespace"},
		}},
	}
	c := &Cluster{Discovery: memory.NewMemCacheClient(fake), Mapper: meta.NewDefaultRESTMapper(nil), Namespace: "shop"}
	cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "a"}}}
	if m := c.Resolved(cm); m == nil || m.Resource.Resource != "configmaps" || cm.GetNamespace() != "shop" {
		t.Errorf("ConfigMap: %v, namespace %q", m, cm.GetNamespace())
	}
	ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "a", "namespace": "x"}}}
	if m := c.Resolved(ns); m == nil || ns.GetNamespace() != "" {
		t.Errorf("Namespace: %v, namespace %q", m, ns.GetNamespace())
	}
	reads := len(fake.Actions())
	gizmo := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Gizmo", "metadata": map[string]any{"name": "a"}}}
	if m := c.Resolved(gizmo); m != nil {
		t.Errorf("an unknown kind resolved to %v", m.Resource)
	}
	c.Enforce = true
	other := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "a", "namespace": "other"}}}
	if m := c.Resolved(other); m != nil {
		t.Errorf("a namespace -n refuses resolved to %v", m.Resource)
	}
	if n := len(fake.Actions()); n != reads {
		t.Errorf("discovery was read %d more times", n-reads)
	}
}
