package monitor

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/remedy"
)

// Component is the Events' source and the monitor's field manager.
const Component = "kubectl-ssa-monitor"

// Recorder is client-go's event recorder (its rate limit and its
// de-duplication of repeated Events: a fight's Event counts up rather
// than piling up) writing to the cluster; stop flushes and ends it.
func Recorder(ctx context.Context, client typedcorev1.EventsGetter) (rec record.EventRecorder, stop func()) {
	b := record.NewBroadcaster(record.WithContext(ctx))
	b.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: client.Events("")})
	return b.NewRecorder(scheme.Scheme, corev1.EventSource{Component: Component}), b.Shutdown
}

func target(ref v1alpha1.ObjectRef, clusterFlags []string) remedy.Target {
	return remedy.Target{ResourceArg: ref.ResourceArg(), Namespace: ref.Namespace, ClusterFlags: clusterFlags}
}

func metaUID(ref v1alpha1.ObjectRef) types.UID { return types.UID(ref.UID) }

// entryName names an entry as a person reads it: the manager, and how
// it writes.
func entryName(manager, operation, subresource string) string {
	s := manager + " (" + operation
	if subresource != "" {
		s += " of /" + subresource
	}
	return s + ")"
}

func editMessage(g moved, fix string) string {
	return fmt.Sprintf("%s edited %s by hand, taking it from the applier %s; fix: %s",
		entryName(g.to.Manager, string(g.to.Operation), g.to.Subresource), strings.Join(g.paths, ", "), strings.Join(g.from, ", "), fix)
}

func takeoverMessage(ref v1alpha1.ObjectRef, g moved, clusterFlags []string) (msg, fix string) {
	msg = fmt.Sprintf("%s took %s from %s by a forced apply (--force-conflicts)", g.to.Manager, strings.Join(g.paths, ", "), strings.Join(g.from, ", "))
	args := []string{}
	for _, p := range g.paths {
		args = append(args, "--field", p)
	}
	args = append(args, "--from", g.to.Manager, "--to", g.from[0], "--mode", "applier")
	fix = fmt.Sprintf("if %s should own it, give it back: %s; if %s should, drop it from %s's manifest",
		g.from[0], target(ref, clusterFlags).SSA([]string{"handover"}, args...), g.to.Manager, g.from[0])
	return msg, fix
}

// fightMessage says who fights over what, without counts: repeated, the
// Event is the same one, counted up by the recorder.
func fightMessage(ref v1alpha1.ObjectRef, f v1alpha1.Fight, window time.Duration, clusterFlags []string) (msg, fix string) {
	names := make([]string, len(f.Managers))
	for i, w := range f.Managers {
		names[i] = entryName(w.Manager, string(w.Operation), string(w.Subresource))
	}
	msg = fmt.Sprintf("%s take %s from each other, again and again (flips within %s)", strings.Join(names, " and "), f.Path, window)
	first, second := f.Managers[0].Manager, f.Managers[len(f.Managers)-1].Manager
	fix = fmt.Sprintf("keep one writer: drop the field from the other's manifest or configuration, or hand it over: %s",
		target(ref, clusterFlags).SSA([]string{"handover"}, "--field", f.Path.String(), "--from", first, "--to", second))
	return msg, fix
}
