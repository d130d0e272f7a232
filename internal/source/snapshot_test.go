package source

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
)

var salt = bytes.Repeat([]byte{7}, 32)

// testSnapshot serves ConfigMaps and Secrets (listed in namespace a) and
// Pods (listed with a selector, and refused in namespace b).
func testSnapshot(t *testing.T) *v1alpha1.Snapshot {
	t.Helper()
	res := func(name, kind string) apidiscoveryv2.APIResourceDiscovery {
		return apidiscoveryv2.APIResourceDiscovery{Resource: name, ResponseKind: &metav1.GroupVersionKind{Version: "v1", Kind: kind}, Scope: apidiscoveryv2.ScopeNamespace, Verbs: []string{"get", "list"}}
	}
	core := apidiscoveryv2.APIGroupDiscoveryList{Items: []apidiscoveryv2.APIGroupDiscovery{{Versions: []apidiscoveryv2.APIVersionDiscovery{{Version: "v1",
		Resources: []apidiscoveryv2.APIResourceDiscovery{res("configmaps", "ConfigMap"), res("secrets", "Secret"), res("pods", "Pod")}}}}}}
	core.APIVersion, core.Kind = "apidiscovery.k8s.io/v2", "APIGroupDiscoveryList"
	apis := core
	apis.Items = nil
	raw := func(v any) json.RawMessage {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	obj := func(kind, ns, name string, labels map[string]any, more map[string]any) map[string]any {
		o := map[string]any{"apiVersion": "v1", "kind": kind, "metadata": map[string]any{"namespace": ns, "name": name, "labels": labels, "resourceVersion": "7"}}
		for k, v := range more {
			o[k] = v
		}
		return o
	}
	return &v1alpha1.Snapshot{TypeMeta: v1alpha1.NewTypeMeta(v1alpha1.SnapshotKind), Salt: hex.EncodeToString(salt), TakenAt: metav1.Unix(1e9, 0),
		Discovery: map[string]json.RawMessage{"/api": raw(core), "/apis": raw(apis)},
		Lists: []v1alpha1.SnapshotList{
			{Version: "v1", Resource: "configmaps", Namespace: "a", Items: []map[string]any{obj("ConfigMap", "a", "c", map[string]any{"app": "web"}, nil)}},
			{Version: "v1", Resource: "secrets", Namespace: "a", Items: []map[string]any{obj("Secret", "a", "s", nil, map[string]any{"data": map[string]any{
				"same": HashValue(salt, []byte("one")), "other": HashValue(salt, []byte("two")), "kept": HashValue(salt, []byte("three"))}})}},
			{Version: "v1", Resource: "pods", Namespace: "a", LabelSelector: "app=web", Items: []map[string]any{obj("Pod", "a", "p", map[string]any{"app": "web"}, nil)}},
			{Version: "v1", Resource: "pods", Namespace: "b", Refused: `pods is forbidden: User "reader" cannot list resource "pods"`},
		}}
}

func TestSnapshotAnswers(t *testing.T) {
	snap, err := NewSnapshot(testSnapshot(t), "a", false)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	dyn := snap.Cluster.Cluster.Dynamic
	gvr := func(r string) schema.GroupVersionResource {
		return schema.GroupVersionResource{Version: "v1", Resource: r}
	}
	get := func(r, ns, name string) error {
		_, err := dyn.Resource(gvr(r)).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
		return err
	}
	tests := []struct {
		name string
		err  error
		want func(error) bool
	}{
		{"listed", get("configmaps", "a", "c"), func(err error) bool { return err == nil }},
		{"not there when listed", get("configmaps", "a", "gone"), apierrors.IsNotFound},
		{"namespace not listed", get("configmaps", "b", "c"), func(err error) bool {
			return err != nil && strings.Contains(err.Error(), "the snapshot lists configmaps in namespace a, not in namespace b: give -n a")
		}},
		{"not served", get("widgets", "a", "w"), apierrors.IsNotFound},
		{"listed with a selector only", get("pods", "a", "p"), func(err error) bool {
			return err != nil && !apierrors.IsNotFound(err) && strings.Contains(err.Error(), "holds only what -l app=web selects")
		}},
		{"refused when taken", get("pods", "b", "p"), apierrors.IsForbidden},
	}
	for _, tc := range tests {
		if !tc.want(tc.err) {
			t.Errorf("%s: %v", tc.name, tc.err)
		}
	}
	l, err := dyn.Resource(gvr("pods")).Namespace("a").List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
	if err != nil || len(l.Items) != 1 || l.Items[0].GetName() != "p" {
		t.Errorf("the list with the snapshot's selector: %v %v", l, err)
	}
	if !snap.Served()(schema.GroupVersionKind{Version: "v1", Kind: "Secret"}) || snap.Served()(schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}) {
		t.Error("served kinds are the snapshot's discovery")
	}
}

// A Secret's stored hashes become the manifest's value where it hashes
// the same, and another value where not.
func TestSnapshotSecretTarget(t *testing.T) {
	snap, err := NewSnapshot(testSnapshot(t), "a", false)
	if err != nil {
		t.Fatal(err)
	}
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	manifest := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "s", "namespace": "a"},
		"data": map[string]any{"same": b64("one"), "other": b64("changed")}}}
	target, err := snap.Target(context.Background(), manifest)
	if err != nil {
		t.Fatal(err)
	}
	data, _, _ := unstructured.NestedStringMap(target.Live.Object, "data")
	if data["same"] != b64("one") || data["other"] == b64("changed") || data["other"] == b64("two") || data["kept"] == b64("three") || data["kept"] == "" {
		t.Errorf("live data %v", data)
	}
}

func TestReadSnapshot(t *testing.T) {
	dir := t.TempDir()
	b, err := json.Marshal(testSnapshot(t))
	if err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	w := gzip.NewWriter(&gz)
	_, _ = w.Write(b)
	_ = w.Close()
	for name, content := range map[string][]byte{"plain": b, "gzip": gz.Bytes()} {
		f := filepath.Join(dir, name)
		if err := os.WriteFile(f, content, 0o600); err != nil {
			t.Fatal(err)
		}
		if s, err := ReadSnapshot(f); err != nil || len(s.Lists) != 4 {
			t.Errorf("%s: %v", name, err)
		}
	}
	f := filepath.Join(dir, "report")
	if err := os.WriteFile(f, []byte(`{"apiVersion":"ssa.kubectl-ssa.io/v1alpha1","kind":"ConflictReport"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadSnapshot(f); err == nil || !strings.Contains(err.Error(), "not a ssa.kubectl-ssa.io/v1alpha1 Snapshot") {
		t.Errorf("a report read as a snapshot: %v", err)
	}
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{empty: "the file is empty", filepath.Join(dir, "nope"): "nope: no such file"} {
		if _, err := ReadSnapshot(path); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", path, err, want)
		}
	}
}
