package migrate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	goruntime "runtime"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	metadatafake "k8s.io/client-go/metadata/fake"
	clienttesting "k8s.io/client-go/testing"

	"github.com/kubectl-ssa/kubectl-ssa/internal/scenario"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/write"
)

// Plumbing tests of Run over a fake metadata client (no SSA semantics:
// the e2e suite proves the writes on a real apiserver): what is sent, how
// a 409 is retried, how one object's failure leaves the others.

var deployments = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}

// partial is the metadata of Deployment name at rv, as ci's apply of its
// replicas leaves it.
func partial(t *testing.T, name, rv string) *metav1.PartialObjectMetadata {
	t.Helper()
	s := (&scenario.State{}).Run(t, scenario.Apply{Manager: "ci", Manifest: "{apiVersion: apps/v1, kind: Deployment, metadata: {name: " + name + ", namespace: ns}, spec: {replicas: 2}}"})
	return &metav1.PartialObjectMetadata{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", ResourceVersion: rv, ManagedFields: s.Live.GetManagedFields()},
	}
}

// run renames ci to kubectl over the objects, with a fast backoff.
func run(t *testing.T, c *metadatafake.FakeMetadataClient, check bool, objs ...*metav1.PartialObjectMetadata) *v1alpha1.MigrationReport {
	t.Helper()
	src := sourceOf(objs)
	backoff := wait.Backoff{Duration: time.Millisecond, Factor: 1, Steps: 5}
	rep, err := Run(context.Background(), Clients{Metadata: c}, src, RunOptions{
		Plan:        Options{Mode: v1alpha1.MigrateRename, Target: "kubectl", From: []string{"ci"}, Now: time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)},
		Concurrency: 2, Backoff: &backoff, Check: check,
	})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func fakeClient(objs ...*metav1.PartialObjectMetadata) *metadatafake.FakeMetadataClient {
	scheme := metadatafake.NewTestScheme()
	_ = metav1.AddMetaToScheme(scheme)
	ros := make([]runtime.Object, len(objs))
	for i, o := range objs {
		ros[i] = o
	}
	return metadatafake.NewSimpleMetadataClient(scheme, ros...)
}

// precondition is the resourceVersion a patch is guarded by (its first op).
func precondition(t *testing.T, a clienttesting.Action) string {
	t.Helper()
	var ops []write.PatchOp
	if err := json.Unmarshal(a.(clienttesting.PatchActionImpl).GetPatch(), &ops); err != nil {
		t.Fatal(err)
	}
	rv, _ := ops[0].Value.(string)
	return rv
}

// A writer between the list and the patch (409): Run reads the object
// again, plans again and sends the patch guarded by the new version.
func TestRunRetriesOnConflict(t *testing.T) {
	obj := partial(t, "web", "10")
	c := fakeClient(obj)
	var mu sync.Mutex
	var sent []string
	c.PrependReactor("patch", "deployments", func(a clienttesting.Action) (bool, runtime.Object, error) {
		rv := precondition(t, a)
		mu.Lock()
		sent = append(sent, rv)
		mu.Unlock()
		if rv == "10" {
			moved := partial(t, "web", "11")
			if err := c.Tracker().Update(deployments, moved, "ns"); err != nil {
				t.Fatal(err)
			}
			return true, nil, apierrors.NewConflict(deployments.GroupResource(), "web", nil)
		}
		return true, partial(t, "web", "12"), nil
	})
	rep := run(t, c, false, obj)
	if rep.Summary.Migrated != 1 || rep.Summary.Failed != 0 || strings.Join(sent, ",") != "10,11" {
		t.Errorf("summary %+v, preconditions sent %q, want 10 then 11", rep.Summary, sent)
	}
}

// One object forbidden, one deleted during the run, one migrated: each
// has its own result, and the run goes on.
func TestRunPartialFailure(t *testing.T) {
	a, b, gone := partial(t, "a", "1"), partial(t, "b", "1"), partial(t, "gone", "1")
	c := fakeClient(a, b, gone)
	c.PrependReactor("patch", "deployments", func(act clienttesting.Action) (bool, runtime.Object, error) {
		switch act.(clienttesting.PatchActionImpl).GetName() {
		case "b":
			return true, nil, apierrors.NewForbidden(deployments.GroupResource(), "b", nil)
		case "gone":
			if err := c.Tracker().Delete(deployments, "ns", "gone"); err != nil {
				t.Fatal(err)
			}
			return true, nil, apierrors.NewConflict(deployments.GroupResource(), "gone", nil)
		}
		return true, partial(t, "a", "2"), nil
	})
	rep := run(t, c, false, a, b, gone)
	if rep.Summary.Scanned != 3 || rep.Summary.Migrated != 1 || rep.Summary.Failed != 1 || rep.Summary.Skipped != 1 {
		t.Fatalf("summary %+v", rep.Summary)
	}
	results := map[string]v1alpha1.ObjectResult{}
	for _, o := range rep.Objects {
		results[o.Object.Name] = o
	}
	if r := results["b"]; r.Result != v1alpha1.ResultFailed || !strings.HasPrefix(r.Reason, "forbidden: ") {
		t.Errorf("b: %+v", r)
	}
	if r := results["gone"]; r.Result != v1alpha1.ResultSkipped || r.Reason != "deleted during the run" {
		t.Errorf("gone: %+v", r)
	}
	if r := results["a"]; r.Result != v1alpha1.ResultMigrated {
		t.Errorf("a: %+v", r)
	}
}

// --check writes nothing.
func TestRunCheckWritesNothing(t *testing.T) {
	obj := partial(t, "web", "1")
	c := fakeClient(obj)
	rep := run(t, c, true, obj)
	if rep.Summary.Migrated != 1 || len(rep.Objects) != 1 || rep.Objects[0].Result != v1alpha1.ResultNeedsWork {
		t.Errorf("%+v", rep)
	}
	for _, a := range c.Actions() {
		if a.GetVerb() != "get" && a.GetVerb() != "list" {
			t.Errorf("--check sent a %s", a.GetVerb())
		}
	}
}

// The progress counter only goes up: a worker that counted an object
// reports it before another worker counts the next (issue 35: reported
// after the lock, an older count could follow a newer one).
func TestRunProgressIsMonotonic(t *testing.T) {
	var objs []*metav1.PartialObjectMetadata
	for i := range 40 {
		objs = append(objs, partial(t, fmt.Sprintf("web-%02d", i), "1"))
	}
	c := fakeClient(objs...)
	src := sourceOf(objs)
	var mu sync.Mutex
	var seen []int
	progress := func(s v1alpha1.MigrationSummary) {
		if s.Scanned%2 == 1 {
			time.Sleep(time.Millisecond) // a slow terminal, half the time
		}
		mu.Lock()
		seen = append(seen, s.Scanned)
		mu.Unlock()
	}
	_, err := Run(context.Background(), Clients{Metadata: c}, src, RunOptions{
		Plan:        Options{Mode: v1alpha1.MigrateRename, Target: "kubectl", From: []string{"ci"}, Now: time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)},
		Concurrency: 8, Check: true, Progress: progress,
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range seen {
		if n != i+1 {
			t.Fatalf("progress counts %v: the %dth report says %d", seen, i+1, n)
		}
	}
	if len(seen) != len(objs) {
		t.Errorf("%d progress reports, want %d", len(seen), len(objs))
	}
}

// TestRunStopsOnCancel: a signal (the context cancelled) during a write
// lets that object finish and starts no other; the run answers with the
// cancellation, not with a failure per object left.
func TestRunStopsOnCancel(t *testing.T) {
	var objs []*metav1.PartialObjectMetadata
	for i := range 20 {
		objs = append(objs, partial(t, fmt.Sprintf("web-%02d", i), "10"))
	}
	c := fakeClient(objs...)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	patched := 0
	c.PrependReactor("patch", "deployments", func(clienttesting.Action) (bool, runtime.Object, error) {
		mu.Lock()
		defer mu.Unlock()
		if patched++; patched == 2 {
			cancel()
		}
		return false, nil, nil
	})
	src := sourceOf(objs)
	rep, err := Run(ctx, Clients{Metadata: c}, src, RunOptions{
		Plan:        Options{Mode: v1alpha1.MigrateRename, Target: "kubectl", From: []string{"ci"}, Now: time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)},
		Concurrency: 1,
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
	if rep.Summary.Failed != 0 || rep.Summary.Migrated != patched || rep.Summary.Scanned != patched || patched != 2 {
		t.Errorf("summary %+v after %d patches, want the 2 patched objects only, none failed", rep.Summary, patched)
	}
}

// A huge --concurrency over two objects starts two workers and a small
// queue (issue 36, F7): the run ends as with any concurrency.
func TestRunHugeConcurrency(t *testing.T) {
	objs := []*metav1.PartialObjectMetadata{partial(t, "a", "1"), partial(t, "b", "1")}
	c := fakeClient(objs...)
	src := sourceOf(objs)
	before := goruntime.NumGoroutine()
	most := 0
	backoff := wait.Backoff{Duration: time.Millisecond, Factor: 1, Steps: 5}
	rep, err := Run(context.Background(), Clients{Metadata: c}, src, RunOptions{
		Plan:        Options{Mode: v1alpha1.MigrateRename, Target: "kubectl", From: []string{"ci"}, Now: time.Now()},
		Concurrency: 1_000_000, Backoff: &backoff, Check: true,
		Progress: func(v1alpha1.MigrationSummary) { most = max(most, goruntime.NumGoroutine()) },
	})
	if err != nil || rep.Summary.Scanned != 2 {
		t.Fatalf("%v %+v", err, rep)
	}
	if most > before+10 {
		t.Fatalf("%d goroutines for 2 objects (%d before)", most, before)
	}
}

// sourceOf yields objs as Deployments.
func sourceOf(objs []*metav1.PartialObjectMetadata) Source {
	return func(ctx context.Context, yield func(Item) error) error {
		for _, o := range objs {
			if err := yield(Item{Resource: Resource{GVR: deployments, Kind: "Deployment", Namespaced: true}, Meta: o.DeepCopy()}); err != nil {
				return err
			}
		}
		return nil
	}
}
