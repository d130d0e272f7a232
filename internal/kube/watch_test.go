package kube

import (
	"context"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"
)

func cm(rv string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("v1")
	u.SetKind("ConfigMap")
	u.SetNamespace("shop")
	u.SetName("web")
	u.SetResourceVersion(rv)
	return u
}

// TestWatchResumes: a closed watch resumes from the last version seen; an
// expired version (410) lists again.
func TestWatchResumes(t *testing.T) {
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{gvr: "ConfigMapList"}, cm("1"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	var mu sync.Mutex
	var requests []string
	client.PrependReactor("list", "configmaps", func(a clienttesting.Action) (bool, runtime.Object, error) {
		mu.Lock()
		requests = append(requests, "list")
		mu.Unlock()
		list := &unstructured.UnstructuredList{Items: []unstructured.Unstructured{*cm("1")}}
		list.SetResourceVersion("1")
		return true, list, nil
	})
	watches := 0
	client.PrependWatchReactor("configmaps", func(a clienttesting.Action) (bool, watch.Interface, error) {
		mu.Lock()
		defer mu.Unlock()
		rv := a.(clienttesting.WatchActionImpl).GetWatchRestrictions().ResourceVersion
		requests = append(requests, "watch from "+rv)
		watches++
		w := watch.NewFake()
		n := watches
		go func() {
			switch n {
			case 1: // one change, then the server closes the watch
				w.Modify(cm("5"))
				w.Stop()
			case 2: // the version expired
				w.Error(&apierrors.NewResourceExpired("too old").ErrStatus)
			default:
				cancel()
			}
		}()
		return true, w, nil
	})

	c := &Cluster{Dynamic: client}
	var seen []string
	err := c.Watch(ctx, WatchOptions{Resource: Resource{GVR: gvr, Kind: "ConfigMap", Namespaced: true}, Namespace: "shop"}, func(u *unstructured.Unstructured, deleted bool) {
		seen = append(seen, u.GetResourceVersion())
	})
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if diff := cmp.Diff([]string{"list", "watch from 1", "watch from 5", "list", "watch from 1"}, requests); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"1", "5", "1"}, seen); diff != "" {
		t.Errorf("versions seen (-want +got):\n%s", diff)
	}
}
