package kube

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

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

// refused is the error of a request to a server that is not listening.
var refused = &net.OpError{Op: "dial", Net: "tcp", Err: &os.SyscallError{Syscall: "connect", Err: syscall.ECONNREFUSED}}

// fakeServer is a dynamic client whose list and watch requests fail with
// the errors in down (one a request, then it answers); its watches
// deliver a version each, then close.
func fakeServer(t *testing.T, down func(request int) error) (*Cluster, schema.GroupVersionResource, *[]string) {
	t.Helper()
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{gvr: "ConfigMapList"}, cm("1"))
	var mu sync.Mutex
	var requests []string
	n := 0
	version := 1
	client.PrependReactor("list", "configmaps", func(a clienttesting.Action) (bool, runtime.Object, error) {
		mu.Lock()
		defer mu.Unlock()
		n++
		if err := down(n); err != nil {
			requests = append(requests, "list: failed")
			return true, nil, err
		}
		requests = append(requests, "list")
		list := &unstructured.UnstructuredList{Items: []unstructured.Unstructured{*cm(fmt.Sprint(version))}}
		list.SetResourceVersion(fmt.Sprint(version))
		return true, list, nil
	})
	client.PrependWatchReactor("configmaps", func(a clienttesting.Action) (bool, watch.Interface, error) {
		mu.Lock()
		defer mu.Unlock()
		n++
		if err := down(n); err != nil {
			requests = append(requests, "watch: failed")
			return true, nil, err
		}
		requests = append(requests, "watch from "+a.(clienttesting.WatchActionImpl).GetWatchRestrictions().ResourceVersion)
		version++
		w := watch.NewFake()
		v := version
		go func() {
			w.Modify(cm(fmt.Sprint(v)))
			w.Stop()
		}()
		return true, w, nil
	})
	return &Cluster{Dynamic: client}, gvr, &requests
}

func fastRetries(t *testing.T) {
	first, max := retryFirst, retryMax
	retryFirst, retryMax = time.Millisecond, 4*time.Millisecond
	t.Cleanup(func() { retryFirst, retryMax = first, max })
}

// A server that goes away (connection refused) and comes back: the watch
// waits for it, says how long it was blind, and goes on from where it was.
func TestWatchOutlivesItsServer(t *testing.T) {
	fastRetries(t)
	c, gvr, requests := fakeServer(t, func(n int) error {
		if n >= 3 && n <= 6 { // the server restarts after the first watch
			return refused
		}
		return nil
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var seen []string
	var outages []Outage
	err := c.Watch(ctx, WatchOptions{Resource: Resource{GVR: gvr, Namespaced: true}, Namespace: "shop",
		OnOutage: func(o Outage) { outages = append(outages, o) }},
		func(u *unstructured.Unstructured, deleted bool) {
			seen = append(seen, u.GetResourceVersion())
			if len(seen) == 3 {
				cancel()
			}
		})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"list", "watch from 1", "watch: failed", "watch: failed", "watch: failed", "watch: failed", "watch from 2"}
	if diff := cmp.Diff(want, *requests); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"1", "2", "3"}, seen); diff != "" {
		t.Errorf("versions seen (-want +got):\n%s", diff)
	}
	if len(outages) != 2 || outages[0].Back || !strings.Contains(outages[0].Err.Error(), "connection refused") || !outages[1].Back || outages[1].Blind <= 0 {
		t.Errorf("outages %+v, want the loss (connection refused) and the return with the time blind", outages)
	}
}

// A server that stays away longer than MaxOutage ends the watch with an
// *OutageError; one that is away when the watch's time is up too (the
// fights of that time are unknown). One that answers "forbidden" ends it
// at once.
func TestWatchGivesUp(t *testing.T) {
	fastRetries(t)
	opts := func(gvr schema.GroupVersionResource) WatchOptions {
		return WatchOptions{Resource: Resource{GVR: gvr, Namespaced: true}, Namespace: "shop", MaxOutage: 50 * time.Millisecond}
	}
	c, gvr, _ := fakeServer(t, func(n int) error {
		if n >= 3 {
			return refused
		}
		return nil
	})
	err := c.Watch(context.Background(), opts(gvr), func(*unstructured.Unstructured, bool) {})
	var out *OutageError
	if !errors.As(err, &out) || out.Limit != 50*time.Millisecond || out.Blind < out.Limit || !strings.Contains(err.Error(), "more than --max-outage 50ms") {
		t.Errorf("got %v, want an OutageError past the limit", err)
	}

	c, gvr, _ = fakeServer(t, func(n int) error {
		if n >= 3 {
			return refused
		}
		return nil
	})
	o := opts(gvr)
	o.MaxOutage = time.Hour
	ctx, cancel := context.WithTimeout(context.Background(), 400*time.Millisecond)
	defer cancel()
	err = c.Watch(ctx, o, func(*unstructured.Unstructured, bool) {})
	if !errors.As(err, &out) || out.Limit != 0 || !strings.Contains(err.Error(), "the watch ended without its server") {
		t.Errorf("got %v, want an OutageError for a watch that ended blind", err)
	}

	c, gvr, requests := fakeServer(t, func(n int) error {
		if n >= 3 {
			return apierrors.NewForbidden(gvr.GroupResource(), "", errors.New("no"))
		}
		return nil
	})
	err = c.Watch(context.Background(), opts(gvr), func(*unstructured.Unstructured, bool) {})
	if err == nil || errors.As(err, &out) || !strings.Contains(err.Error(), "forbidden") || len(*requests) != 3 {
		t.Errorf("got %v after %v, want the forbidden error at once", err, *requests)
	}
}

// A server that comes back without the versions it had (a restarted
// apiserver's new watch cache answers 410 Gone): the watch lists again.
func TestWatchRelistsAfterRestart(t *testing.T) {
	fastRetries(t)
	gone := apierrors.NewResourceExpired("too old resource version")
	c, gvr, requests := fakeServer(t, func(n int) error {
		switch n {
		case 3, 4:
			return refused
		case 5:
			return gone
		}
		return nil
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var outages []Outage
	var seen []string
	err := c.Watch(ctx, WatchOptions{Resource: Resource{GVR: gvr, Namespaced: true}, Namespace: "shop",
		OnOutage: func(o Outage) { outages = append(outages, o) }},
		func(u *unstructured.Unstructured, deleted bool) {
			seen = append(seen, u.GetResourceVersion())
			if len(seen) == 4 {
				cancel()
			}
		})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"list", "watch from 1", "watch: failed", "watch: failed", "watch: failed", "list", "watch from 2"}
	if diff := cmp.Diff(want, *requests); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
	// The list after the restart gives the version the server has.
	if diff := cmp.Diff([]string{"1", "2", "2", "3"}, seen); diff != "" {
		t.Errorf("versions seen (-want +got):\n%s", diff)
	}
	if len(outages) != 2 || !outages[1].Back {
		t.Errorf("outages %+v, want the loss and the return", outages)
	}
}
