package write

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
)

// These are plumbing tests: the fake client has no SSA semantics, so they
// prove only what is sent and how 409s are retried. The e2e suite proves
// the writes on a real apiserver.

var cmGVR = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

func fakeClient(objs ...runtime.Object) *dynamicfake.FakeDynamicClient {
	return dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{cmGVR: "ConfigMapList"}, objs...)
}

func configMap(rv string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap"}}
	u.SetName("settings")
	u.SetNamespace("default")
	u.SetResourceVersion(rv)
	return u
}

func TestPatchSendsResourceVersionFirst(t *testing.T) {
	c := fakeClient(configMap("7"))
	var got []PatchOp
	var gotOpts metav1.PatchOptions
	c.PrependReactor("patch", "configmaps", func(a clienttesting.Action) (bool, runtime.Object, error) {
		p := a.(clienttesting.PatchActionImpl)
		if err := json.Unmarshal(p.GetPatch(), &got); err != nil {
			t.Fatal(err)
		}
		gotOpts = p.PatchOptions
		return true, configMap("8"), nil
	})
	ri := c.Resource(cmGVR).Namespace("default")
	_, err := Patch(context.Background(), ri, "settings", "7", []PatchOp{RemoveAnnotationOp("kubectl.kubernetes.io/last-applied-configuration")}, Options{DryRun: v1alpha1.DryRunServer, FieldManager: "kubectl-ssa"})
	if err != nil {
		t.Fatal(err)
	}
	want := []PatchOp{
		{Op: "replace", Path: "/metadata/resourceVersion", Value: "7"},
		{Op: "remove", Path: "/metadata/annotations/kubectl.kubernetes.io~1last-applied-configuration"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("patch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(metav1.PatchOptions{FieldManager: "kubectl-ssa", DryRun: []string{metav1.DryRunAll}}, gotOpts); diff != "" {
		t.Errorf("options (-want +got):\n%s", diff)
	}
}

func TestPatchRefuses(t *testing.T) {
	c := fakeClient(configMap("7"))
	sent := 0
	c.PrependReactor("patch", "*", func(clienttesting.Action) (bool, runtime.Object, error) {
		sent++
		return true, configMap("8"), nil
	})
	ri := c.Resource(cmGVR).Namespace("default")
	tests := []struct {
		name string
		rv   string
		o    Options
		want error
	}{
		{name: "client dry run sends nothing", rv: "7", o: Options{DryRun: v1alpha1.DryRunClient}, want: ErrClientDryRun},
		{name: "no resourceVersion, no write", rv: "", o: Options{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Patch(context.Background(), ri, "settings", tt.rv, ManagedFieldsOps(nil), tt.o)
			if err == nil || (tt.want != nil && !errors.Is(err, tt.want)) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
		})
	}
	if sent != 0 {
		t.Errorf("%d patches sent, want none", sent)
	}
}

func TestManagedFieldsOpsClearsWithOneEmptyEntry(t *testing.T) {
	b, err := json.Marshal(ManagedFieldsOps(nil))
	if err != nil {
		t.Fatal(err)
	}
	if want := `[{"op":"replace","path":"/metadata/managedFields","value":[{}]}]`; string(b) != want {
		t.Errorf("got %s, want %s", b, want)
	}
}

var quick = wait.Backoff{Duration: time.Millisecond, Factor: 1, Steps: 4}

func conflictErr() error {
	return apierrors.NewConflict(schema.GroupResource{Resource: "configmaps"}, "settings", errors.New("the object has been modified"))
}

func TestRetryOnConflictRereadsAndSucceeds(t *testing.T) {
	// The server answers 409 twice (another writer got in between), then
	// accepts: each try re-reads and patches from the fresh resourceVersion.
	c := fakeClient(configMap("1"))
	rv, conflicts := 1, 0
	c.PrependReactor("get", "configmaps", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, configMap(string(rune('0' + rv))), nil
	})
	var sentRVs []string
	c.PrependReactor("patch", "configmaps", func(a clienttesting.Action) (bool, runtime.Object, error) {
		var ops []PatchOp
		_ = json.Unmarshal(a.(clienttesting.PatchActionImpl).GetPatch(), &ops)
		sentRVs = append(sentRVs, ops[0].Value.(string))
		if conflicts < 2 {
			conflicts++
			rv++ // the other writer
			return true, nil, conflictErr()
		}
		return true, configMap("9"), nil
	})
	ri := c.Resource(cmGVR).Namespace("default")
	var attempts []int
	err := RetryOnConflict(context.Background(), quick, func(ctx context.Context, attempt int) error {
		attempts = append(attempts, attempt)
		live, err := ri.Get(ctx, "settings", metav1.GetOptions{})
		if err != nil {
			return err
		}
		_, err = Patch(ctx, ri, "settings", live.GetResourceVersion(), ManagedFieldsOps(nil), Options{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]int{0, 1, 2}, attempts); diff != "" {
		t.Errorf("attempts (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"1", "2", "3"}, sentRVs); diff != "" {
		t.Errorf("resourceVersions sent (-want +got):\n%s", diff)
	}
}

func TestRetryOnConflictGivesUp(t *testing.T) {
	tries := 0
	err := RetryOnConflict(context.Background(), quick, func(context.Context, int) error {
		tries++
		return conflictErr()
	})
	var ce *ConflictsError
	if !errors.As(err, &ce) || ce.Tries != 4 || tries != 4 {
		t.Fatalf("err = %v after %d tries, want a ConflictsError after 4", err, tries)
	}
	if !apierrors.IsConflict(err) {
		t.Error("the last 409 should stay visible through Unwrap")
	}
}

func TestRetryOnConflictStopsOnOtherErrorsAndContext(t *testing.T) {
	boom := errors.New("forbidden")
	tries := 0
	err := RetryOnConflict(context.Background(), quick, func(context.Context, int) error {
		tries++
		return boom
	})
	if !errors.Is(err, boom) || tries != 1 {
		t.Errorf("err = %v after %d tries, want %v after 1", err, tries, boom)
	}

	ctx, cancel := context.WithCancel(context.Background())
	slow := wait.Backoff{Duration: time.Hour, Factor: 1, Steps: 3}
	tries = 0
	err = RetryOnConflict(ctx, slow, func(context.Context, int) error {
		tries++
		cancel()
		return conflictErr()
	})
	if !errors.Is(err, context.Canceled) || tries != 1 {
		t.Errorf("err = %v after %d tries, want context.Canceled after 1 (no hour-long sleep)", err, tries)
	}
}

func TestParseDryRun(t *testing.T) {
	for in, want := range map[string]v1alpha1.DryRun{"": v1alpha1.DryRunNone, "none": v1alpha1.DryRunNone, "unchanged": v1alpha1.DryRunNone, "client": v1alpha1.DryRunClient, "server": v1alpha1.DryRunServer} {
		got, err := ParseDryRun(in)
		if err != nil || got != want {
			t.Errorf("ParseDryRun(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseDryRun("all"); err == nil {
		t.Error("ParseDryRun(all) should fail")
	}
}

func TestFinishing(t *testing.T) {
	t.Run("outlives the cancellation by the grace", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		fin, stop := Finishing(ctx, 2*time.Second)
		defer stop()
		cancel()
		select {
		case <-fin.Done():
			t.Fatal("cancelled with its parent")
		case <-time.After(50 * time.Millisecond):
		}
		select {
		case <-fin.Done():
		case <-time.After(time.Minute):
			t.Fatal("still running long after the grace")
		}
	})
	t.Run("stop ends it", func(t *testing.T) {
		fin, stop := Finishing(context.Background(), time.Hour)
		stop()
		if fin.Err() == nil {
			t.Fatal("not cancelled by stop")
		}
	})
	t.Run("a deadline holds", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
		defer cancel()
		fin, stop := Finishing(ctx, time.Hour)
		defer stop()
		select {
		case <-fin.Done():
		case <-time.After(5 * time.Second):
			t.Fatal("the parent's deadline was dropped")
		}
	})
}
