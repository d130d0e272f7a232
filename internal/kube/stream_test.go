package kube

import (
	"context"
	"sort"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	metadatafake "k8s.io/client-go/metadata/fake"
)

func partial(apiVersion, kind, name string) *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: apiVersion, Kind: kind}, ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name}}
}

// TestStreamConcurrency: kinds listed side by side yield every object
// once, one yield at a time.
func TestStreamConcurrency(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := metav1.AddMetaToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	shop := &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"}, ObjectMeta: metav1.ObjectMeta{Name: "shop"}}
	objs := []runtime.Object{shop}
	for _, n := range []string{"a", "b", "c"} {
		objs = append(objs, partial("v1", "ConfigMap", n), partial("v1", "Secret", n), partial("v1", "ServiceAccount", n))
	}
	mapper := meta.NewDefaultRESTMapper(nil)
	for _, k := range []string{"ConfigMap", "Secret", "ServiceAccount"} {
		mapper.Add(schema.GroupVersionKind{Version: "v1", Kind: k}, meta.RESTScopeNamespace)
	}
	c := &Cluster{Metadata: metadatafake.NewSimpleMetadataClient(scheme, objs...), Mapper: mapper, Namespace: "shop"}
	sel := &Selection{}
	var active atomic.Int32
	var got []string
	_, err := sel.Stream(context.Background(), c, []string{"configmaps,secrets,serviceaccounts"}, StreamOptions{Concurrency: 3, ChunkSize: 2}, func(it Item) error {
		if active.Add(1) > 1 {
			t.Error("two yields at once")
		}
		time.Sleep(time.Millisecond)
		got = append(got, it.Resource.Kind+"/"+it.Meta.Name)
		active.Add(-1)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(got)
	want := []string{"ConfigMap/a", "ConfigMap/b", "ConfigMap/c", "Secret/a", "Secret/b", "Secret/c", "ServiceAccount/a", "ServiceAccount/b", "ServiceAccount/c"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// A namespace that does not exist is an error, not an empty list.
func TestStreamMissingNamespace(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := metav1.AddMetaToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, meta.RESTScopeNamespace)
	c := &Cluster{Metadata: metadatafake.NewSimpleMetadataClient(scheme), Mapper: mapper, Namespace: "typo"}
	_, err := (&Selection{}).Stream(context.Background(), c, []string{"configmaps"}, StreamOptions{}, func(Item) error { return nil })
	if err == nil || err.Error() != `namespace "typo" not found: check -n (kubectl get namespaces lists them)` {
		t.Errorf("got %v", err)
	}
}
