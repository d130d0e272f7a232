package kube

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
)

// WatchOptions say what Watch watches.
type WatchOptions struct {
	Resource Resource
	// Namespace: "" for all namespaces (or a cluster-scoped kind).
	Namespace string
	// Name, when set, watches one object.
	Name          string
	LabelSelector string
}

// Watch calls fn with every version of the watched objects, whole and with
// their managedFields: first those that exist, then each change, until ctx
// ends. It resumes from the last resourceVersion when the server closes
// the watch, and lists again when that version has expired (410 Gone).
// Deleted objects are passed with deleted set.
func (c *Cluster) Watch(ctx context.Context, o WatchOptions, fn func(obj *unstructured.Unstructured, deleted bool)) error {
	var ri dynamic.ResourceInterface = c.Dynamic.Resource(o.Resource.GVR)
	if o.Resource.Namespaced && o.Namespace != "" {
		ri = c.Dynamic.Resource(o.Resource.GVR).Namespace(o.Namespace)
	}
	opts := metav1.ListOptions{LabelSelector: o.LabelSelector}
	if o.Name != "" {
		opts.FieldSelector = fields.OneTermEqualSelector("metadata.name", o.Name).String()
	}
	rv := ""
	for ctx.Err() == nil {
		if rv == "" {
			list, err := ri.List(ctx, opts)
			if err != nil {
				return ended(ctx, fmt.Errorf("listing %s: %w", o.Resource.GVR.GroupResource(), Friendly(err)))
			}
			for i := range list.Items {
				fn(&list.Items[i], false)
			}
			rv = list.GetResourceVersion()
		}
		wo := opts
		wo.ResourceVersion, wo.AllowWatchBookmarks = rv, true
		w, err := ri.Watch(ctx, wo)
		if err != nil {
			if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
				rv = ""
				continue
			}
			return ended(ctx, fmt.Errorf("watching %s: %w", o.Resource.GVR.GroupResource(), Friendly(err)))
		}
		rv = drain(ctx, w, rv, fn)
		w.Stop()
		// A closed watch resumes after a pause, so that a server
		// refusing watches is not hammered.
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
	return nil
}

// ended is err, or nil when the request failed because ctx ended (the
// watch stops as asked).
func ended(ctx context.Context, err error) error {
	select {
	case <-ctx.Done():
		return nil
	default:
		return err
	}
}

// drain passes a watch's events to fn until it closes; it returns the
// version to resume from ("" to list again).
func drain(ctx context.Context, w watch.Interface, rv string, fn func(*unstructured.Unstructured, bool)) string {
	for {
		select {
		case <-ctx.Done():
			return rv
		case ev, ok := <-w.ResultChan():
			if !ok {
				return rv
			}
			switch ev.Type {
			case watch.Error:
				// 410 Gone (the version expired) or another error:
				// list again, which fails loudly if the error stays.
				return ""
			case watch.Bookmark:
				if u, ok := ev.Object.(*unstructured.Unstructured); ok {
					rv = u.GetResourceVersion()
				}
			case watch.Added, watch.Modified, watch.Deleted:
				u, ok := ev.Object.(*unstructured.Unstructured)
				if !ok {
					continue
				}
				rv = u.GetResourceVersion()
				fn(u, ev.Type == watch.Deleted)
			}
		}
	}
}
