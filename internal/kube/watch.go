package kube

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
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
	// MaxOutage is how long the watch goes on without its server (a
	// restart, a network blip) before Watch fails; 0 is DefaultMaxOutage.
	MaxOutage time.Duration
	// OnOutage, when set, is told when the server is lost and when it is
	// back.
	OnOutage func(Outage)
}

// DefaultMaxOutage rides out an apiserver restart or a network blip, not
// a cluster that is gone.
const DefaultMaxOutage = 2 * time.Minute

// Outage says the watch lost its server (Back false: Err is why) or has
// it again (Back true) after being blind for Blind.
type Outage struct {
	Back  bool
	Err   error
	Blind time.Duration
}

// OutageError ends a watch that was without its server: for longer than
// Limit, or (Limit 0) when its context ended before the server came back.
// Changes in the Blind time were not seen.
type OutageError struct {
	Blind time.Duration
	Limit time.Duration
	Err   error
}

func (e *OutageError) Error() string {
	blind := e.Blind.Round(100 * time.Millisecond)
	if e.Limit > 0 {
		return fmt.Sprintf("no answer from the server for %s, more than --max-outage %s: %v", blind, e.Limit, e.Err)
	}
	return fmt.Sprintf("the watch ended without its server for its last %s, when fights could not be seen: %v", blind, e.Err)
}

func (e *OutageError) Unwrap() error { return e.Err }

// The pauses between attempts to reach a lost server: doubling from
// retryFirst up to retryMax.
var (
	retryFirst = 250 * time.Millisecond
	retryMax   = 5 * time.Second
)

// Watch calls fn with every version of the watched objects, whole and with
// their managedFields: first those that exist, then each change, until ctx
// ends. It resumes from the last resourceVersion when the server closes
// the watch, and lists again when that version has expired (410 Gone).
// Deleted objects are passed with deleted set. When the server cannot be
// reached (it restarts, the network drops) it tries again, pausing longer
// each time, for up to o.MaxOutage, and tells o.OnOutage; it returns an
// *OutageError when the server stays away longer, or when ctx ends while
// it is away. Other errors (forbidden, an unknown kind) end it at once.
func (c *Cluster) Watch(ctx context.Context, o WatchOptions, fn func(obj *unstructured.Unstructured, deleted bool)) error {
	var ri dynamic.ResourceInterface = c.Dynamic.Resource(o.Resource.GVR)
	if o.Resource.Namespaced && o.Namespace != "" {
		ri = c.Dynamic.Resource(o.Resource.GVR).Namespace(o.Namespace)
	}
	opts := metav1.ListOptions{LabelSelector: o.LabelSelector}
	if o.Name != "" {
		opts.FieldSelector = fields.OneTermEqualSelector("metadata.name", o.Name).String()
	}
	out := &outage{max: o.MaxOutage, notify: o.OnOutage, pause: retryFirst}
	if out.max <= 0 {
		out.max = DefaultMaxOutage
	}
	gr := o.Resource.GVR.GroupResource()
	rv := ""
	heard := time.Now() // the last answer from the server
	for ctx.Err() == nil {
		if rv == "" {
			list, err := ri.List(ctx, opts)
			if err != nil {
				if err := out.failed(ctx, heard, fmt.Errorf("listing %s: %w", gr, c.Friendly(err)), err); err != nil {
					return err
				}
				continue
			}
			out.back()
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
				out.back()
				rv = ""
				continue
			}
			if err := out.failed(ctx, heard, fmt.Errorf("watching %s: %w", gr, c.Friendly(err)), err); err != nil {
				return err
			}
			continue
		}
		out.back()
		rv = drain(ctx, w, rv, fn)
		w.Stop()
		heard = time.Now()
		// A closed watch resumes after a pause, so that a server
		// refusing watches is not hammered.
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
	return out.ended()
}

// outage follows the time a watch is without its server.
type outage struct {
	max    time.Duration
	notify func(Outage)
	pause  time.Duration
	// since is when the server was last heard from, while it is away
	// (zero while it answers); err is the last error.
	since time.Time
	err   error
}

// failed takes a failed request: a reason to end the watch (returned), or
// one to try again after a pause (nil). heard is when the server last
// answered; raw is the error as the client returned it.
func (o *outage) failed(ctx context.Context, heard time.Time, err, raw error) error {
	if ctx.Err() != nil {
		return o.ended()
	}
	if !unreachable(raw) {
		return err
	}
	if o.since.IsZero() {
		o.since = heard
		if o.notify != nil {
			o.notify(Outage{Err: err})
		}
	}
	o.err = err
	if blind := time.Since(o.since); blind > o.max {
		return &OutageError{Blind: blind, Limit: o.max, Err: err}
	}
	select {
	case <-ctx.Done():
		return o.ended()
	case <-time.After(o.pause):
	}
	o.pause = min(2*o.pause, retryMax)
	return nil
}

// back takes an answer from the server.
func (o *outage) back() {
	if o.since.IsZero() {
		return
	}
	if o.notify != nil {
		o.notify(Outage{Back: true, Blind: time.Since(o.since)})
	}
	o.since, o.err, o.pause = time.Time{}, nil, retryFirst
}

// ended is what a watch whose context ended returns: nil, or an
// *OutageError when it ended without its server.
func (o *outage) ended() error {
	if o.since.IsZero() {
		return nil
	}
	return &OutageError{Blind: time.Since(o.since), Err: o.err}
}

// unreachable tells whether a request failed for want of a server that
// answers: no answer at all (refused, reset, a timeout), or an answer
// that says "later" (429, 5xx). A server that answers no (forbidden, no
// such kind) is not waited for.
func unreachable(err error) bool {
	var st apierrors.APIStatus
	if !errors.As(err, &st) {
		return true
	}
	code := st.Status().Code
	return code == http.StatusTooManyRequests || code >= http.StatusInternalServerError ||
		apierrors.IsTimeout(err) || apierrors.IsServerTimeout(err)
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

// CheckWatchTarget says, before a watch starts, that its namespace or its
// named object does not exist (a watch of them would wait forever).
func (c *Cluster) CheckWatchTarget(ctx context.Context, wo WatchOptions) error {
	if wo.Resource.Namespaced && wo.Namespace != "" {
		_, err := c.Dynamic.Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}).Get(ctx, wo.Namespace, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("namespace %q not found: check -n", wo.Namespace)
		}
	}
	if wo.Name == "" {
		return nil
	}
	ri := c.Dynamic.Resource(wo.Resource.GVR)
	var err error
	if wo.Resource.Namespaced {
		_, err = ri.Namespace(wo.Namespace).Get(ctx, wo.Name, metav1.GetOptions{})
	} else {
		_, err = ri.Get(ctx, wo.Name, metav1.GetOptions{})
	}
	if err != nil {
		return c.Friendly(err)
	}
	return nil
}
