package e2e

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/yaml"
)

var (
	mapperOnce sync.Once
	mapper     *restmapper.DeferredDiscoveryRESTMapper
)

func restMapper() *restmapper.DeferredDiscoveryRESTMapper {
	mapperOnce.Do(func() {
		mapper = restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(env.client.Discovery()))
	})
	return mapper
}

// nsPlaceholder in a manifest is the namespace of the test (an Event's
// involvedObject.namespace must be its own).
const nsPlaceholder = "@NS@"

// parse reads one YAML object.
func parse(t *testing.T, manifest string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(manifest), &u.Object); err != nil {
		t.Fatalf("parsing manifest: %v\n%s", err, manifest)
	}
	return u
}

// resourceFor returns the dynamic client for an object's kind.
func resourceFor(t *testing.T, u *unstructured.Unstructured) dynamic.ResourceInterface {
	t.Helper()
	m := mappingOf(t, u)
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		return env.dynamic.Resource(m.Resource).Namespace(u.GetNamespace())
	}
	return env.dynamic.Resource(m.Resource)
}

// mappingOf is the resource of u's kind, discovery refreshed once for a
// kind created a moment ago.
func mappingOf(t *testing.T, u *unstructured.Unstructured) *meta.RESTMapping {
	t.Helper()
	gvk := u.GroupVersionKind()
	m, err := restMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		restMapper().Reset()
		if m, err = restMapper().RESTMapping(gvk.GroupKind(), gvk.Version); err != nil {
			t.Fatalf("mapping %s: %v", gvk, err)
		}
	}
	return m
}

// setNamespace puts u in ns, unless its kind is cluster-scoped or ns is "".
func setNamespace(t *testing.T, u *unstructured.Unstructured, ns string) {
	t.Helper()
	if ns != "" && mappingOf(t, u).Scope.Name() == meta.RESTScopeNameNamespace {
		u.SetNamespace(ns)
	}
}

// apply server-side applies manifest in ns as manager.
func apply(t *testing.T, ns, manager, manifest string, force bool) *unstructured.Unstructured {
	t.Helper()
	u := parse(t, strings.ReplaceAll(manifest, nsPlaceholder, ns))
	setNamespace(t, u, ns)
	out, err := resourceFor(t, u).Apply(context.Background(), u.GetName(), u, metav1.ApplyOptions{FieldManager: manager, Force: force})
	if err != nil {
		t.Fatalf("apply by %s: %v", manager, err)
	}
	return out
}

// csaApply does what "kubectl apply" (client-side) does on create: the
// object with the last-applied annotation, created by the manager
// kubectl-client-side-apply.
func csaApply(t *testing.T, ns, manifest string) *unstructured.Unstructured {
	t.Helper()
	u := parse(t, manifest)
	u.SetNamespace(ns)
	last, err := json.Marshal(u.Object)
	if err != nil {
		t.Fatal(err)
	}
	ann := u.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann["kubectl.kubernetes.io/last-applied-configuration"] = string(last) + "\n"
	u.SetAnnotations(ann)
	out, err := resourceFor(t, u).Create(context.Background(), u, metav1.CreateOptions{FieldManager: "kubectl-client-side-apply"})
	if err != nil {
		t.Fatalf("client-side apply: %v", err)
	}
	return out
}

// patch sends a merge patch as manager, optionally to a subresource.
func patch(t *testing.T, obj *unstructured.Unstructured, manager, patchJSON string, subresource ...string) *unstructured.Unstructured {
	t.Helper()
	out, err := resourceFor(t, obj).Patch(context.Background(), obj.GetName(), types.MergePatchType, []byte(patchJSON), metav1.PatchOptions{FieldManager: manager}, subresource...)
	if err != nil {
		t.Fatalf("patch by %s %v: %v", manager, subresource, err)
	}
	return out
}

// tryPatch is patch for goroutines other than the test's own (where
// t.Fatal must not be called).
func tryPatch(obj *unstructured.Unstructured, manager, patchJSON string) error {
	gvk := obj.GroupVersionKind()
	m, err := restMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return err
	}
	_, err = env.dynamic.Resource(m.Resource).Namespace(obj.GetNamespace()).Patch(context.Background(), obj.GetName(), types.MergePatchType, []byte(patchJSON), metav1.PatchOptions{FieldManager: manager})
	return err
}

// get reads an object back.
func get(t *testing.T, obj *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	out, err := resourceFor(t, obj).Get(context.Background(), obj.GetName(), metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get %s: %v", obj.GetName(), err)
	}
	return out
}

var cmGVR = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

// configMapReader lets user read (get, list) ConfigMaps in ns, nothing more.
func configMapReader(t *testing.T, ns, user string) {
	t.Helper()
	_, err := env.client.RbacV1().Roles(ns).Create(context.Background(), &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: user},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = env.client.RbacV1().RoleBindings(ns).Create(context.Background(), &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: user},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: user},
		Subjects:   []rbacv1.Subject{{Kind: "User", Name: user}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
}
