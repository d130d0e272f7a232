package audit

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
)

type fakeLister struct {
	objs     []Object
	unlisted []string
	served   bool
}

func (f fakeLister) List(_ context.Context, each func(Object)) ([]string, error) {
	for _, o := range f.objs {
		each(o)
	}
	return f.unlisted, nil
}

func (f fakeLister) Served(schema.GroupVersionKind) bool { return f.served }

// TestRun: clusters are read side by side; each finding carries its
// cluster's name, fix flags and served versions; a cluster that can't be
// read is an error named after it, and the others still count.
func TestRun(t *testing.T) {
	obj := func(name string, e metav1.ManagedFieldsEntry) Object {
		return Object{Ref: v1alpha1.ObjectRef{APIVersion: "v1", Kind: "ConfigMap", Namespace: "shop", Name: name}, ManagedFields: []metav1.ManagedFieldsEntry{e}}
	}
	edited := obj("web", entry("kubectl-edit", update, "", `{"f:data":{"f:x":{}}}`))
	clusters := []Cluster{
		{Name: "prod", ClusterFlags: []string{"--context=prod"}, Connect: func() (Lister, error) {
			return fakeLister{objs: []Object{edited, obj("db", entry("argocd", apply, "", `{"f:data":{"f:y":{}}}`))}, served: true}, nil
		}},
		{Name: "stage", ClusterFlags: []string{"--context=stage"}, Connect: func() (Lister, error) {
			// stage no longer serves v1 ConfigMaps (a test's fiction).
			return fakeLister{objs: []Object{obj("api", entry("argocd", apply, "", `{"f:data":{"f:y":{}}}`))}, unlisted: []string{"widgets.example.com: forbidden"}}, nil
		}},
		{Name: "gone", Connect: func() (Lister, error) { return nil, errors.New("connection refused") }},
	}
	var progress Progress
	rep, failed := Run(context.Background(), clusters, Options{LastAppliedThreshold: DefaultLastAppliedThreshold}, &progress)
	if len(failed) != 1 || failed[0].Error() != "context gone: connection refused" {
		t.Errorf("failed = %v", failed)
	}
	if rep.Scanned != 3 || progress.Scanned.Load() != 3 || progress.Found.Load() != int64(len(rep.Findings)) {
		t.Errorf("scanned %d (progress %d), findings %d (progress %d)", rep.Scanned, progress.Scanned.Load(), len(rep.Findings), progress.Found.Load())
	}
	if strings.Join(rep.Clusters, ",") != "prod,stage,gone" {
		t.Errorf("clusters = %v", rep.Clusters)
	}
	if len(rep.Unlisted) != 1 || rep.Unlisted[0] != "context stage: widgets.example.com: forbidden" {
		t.Errorf("unlisted = %v", rep.Unlisted)
	}
	codes := map[string]string{}
	for _, f := range rep.Findings {
		codes[f.Cluster+"/"+f.Object.Name+"/"+string(f.Code)] = f.Fix.String()
	}
	fix, ok := codes["prod/web/manual-edit"]
	if !ok || !strings.Contains(fix, "--context=prod") {
		t.Errorf("prod's manual edit: %q in %v", fix, codes)
	}
	if _, ok := codes["stage/api/unserved-apiversion"]; !ok {
		t.Errorf("stage's own served versions were not used: %v", codes)
	}
	if _, ok := codes["prod/db/unserved-apiversion"]; ok {
		t.Errorf("prod serves v1: %v", codes)
	}
}

// cancelLister cancels the run after its first object and then fails as a
// client does on a cancelled request.
type cancelLister struct{ cancel context.CancelFunc }

func (l cancelLister) List(ctx context.Context, each func(Object)) ([]string, error) {
	each(Object{Ref: v1alpha1.ObjectRef{APIVersion: "v1", Kind: "ConfigMap", Namespace: "shop", Name: "a"}})
	l.cancel()
	return nil, fmt.Errorf("listing configmaps: %w", ctx.Err())
}

func (cancelLister) Served(schema.GroupVersionKind) bool { return true }

// TestRunStopped: a signal (the context cancelled) is the run's one
// failure, the cancellation itself, not an error per cluster cut off.
func TestRunStopped(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	l := cancelLister{cancel: cancel}
	clusters := []Cluster{
		{Name: "prod", Connect: func() (Lister, error) { return l, nil }},
		{Name: "stage", Connect: func() (Lister, error) { return l, nil }},
	}
	_, failed := Run(ctx, clusters, Options{}, nil)
	if len(failed) != 1 || failed[0] != context.Canceled {
		t.Errorf("failed = %v, want context.Canceled alone", failed)
	}
	// One cluster's own error keeps what it wraps.
	clusters = clusters[:1]
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	clusters = append(clusters, Cluster{Name: "gone", Connect: func() (Lister, error) { return nil, fmt.Errorf("dialing: %w", context.DeadlineExceeded) }})
	clusters[0].Connect = func() (Lister, error) { return fakeLister{served: true}, nil }
	_, failed = Run(ctx, clusters, Options{}, nil)
	if len(failed) != 1 || !errors.Is(failed[0], context.DeadlineExceeded) || failed[0].Error() != "context gone: dialing: context deadline exceeded" {
		t.Errorf("failed = %v", failed)
	}
}
