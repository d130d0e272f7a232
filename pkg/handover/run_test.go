package handover

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kubectl-ssa/kubectl-ssa/internal/scenario"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/write"
)

// These are plumbing tests: the fake client has no SSA semantics, so they
// prove what is sent and how 409s are retried; the e2e suite proves the
// writes on a real apiserver.

var deployGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}

// TestRunServerDryRunRetriesOnConflict: a controller writing status
// between the read and the dry run makes the server answer 409; the dry
// run reads again, plans again and is sent again with the new
// resourceVersion, instead of failing.
func TestRunServerDryRunRetriesOnConflict(t *testing.T) {
	live := web(t, kubectlApply)
	live.SetResourceVersion("10")
	c := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{deployGVR: "DeploymentList"}, live)
	var sent []string // the resourceVersion precondition of each patch
	var dryRun [][]string
	c.PrependReactor("patch", "deployments", func(a clienttesting.Action) (bool, runtime.Object, error) {
		p := a.(clienttesting.PatchActionImpl)
		var ops []write.PatchOp
		if err := json.Unmarshal(p.GetPatch(), &ops); err != nil {
			t.Fatal(err)
		}
		rv, _ := ops[0].Value.(string)
		sent = append(sent, rv)
		dryRun = append(dryRun, p.PatchOptions.DryRun)
		if rv == "10" {
			// The status writer got there first: the stored object moved on.
			moved := live.DeepCopy()
			moved.SetResourceVersion("11")
			if err := c.Tracker().Update(deployGVR, moved, "ns"); err != nil {
				t.Fatal(err)
			}
			return true, nil, apierrors.NewConflict(schema.GroupResource{Group: "apps", Resource: "deployments"}, "web", nil)
		}
		out := live.DeepCopy()
		out.SetResourceVersion(rv)
		return true, out, nil
	})
	b := wait.Backoff{Duration: time.Millisecond, Factor: 1, Steps: 5}
	req := Request{Fields: []fieldpath.Path{path(".spec.replicas")}, From: "kubectl", To: "argocd", Mode: v1alpha1.HandoverApplier}
	r, err := Run(context.Background(), c.Resource(deployGVR).Namespace("ns"), "web", req, Options{DryRun: v1alpha1.DryRunServer, Backoff: &b})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if r.Status != v1alpha1.HandoverPlanned {
		t.Errorf("status %q, want %q (%s)", r.Status, v1alpha1.HandoverPlanned, r.Message)
	}
	// The first share fails on 10; then share and release are both sent on 11.
	if diff := cmp.Diff([]string{"10", "11", "11"}, sent); diff != "" {
		t.Errorf("resourceVersions sent (-want +got):\n%s", diff)
	}
	for i, d := range dryRun {
		if diff := cmp.Diff([]string{metav1.DryRunAll}, d); diff != "" {
			t.Errorf("patch %d is not a dry run (-want +got):\n%s", i, diff)
		}
	}
	for _, s := range r.Steps {
		if s.Status != v1alpha1.StepDryRun {
			t.Errorf("step %s: status %q, want %q", s.Name, s.Status, v1alpha1.StepDryRun)
		}
	}
}

// TestRunServerDryRunGivesUp: an object that never stops changing ends
// the dry run with the bounded-backoff error, not an endless loop.
func TestRunServerDryRunGivesUp(t *testing.T) {
	live := web(t, kubectlApply)
	live.SetResourceVersion("10")
	c := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{deployGVR: "DeploymentList"}, live)
	n := 0
	c.PrependReactor("patch", "deployments", func(clienttesting.Action) (bool, runtime.Object, error) {
		n++
		return true, nil, apierrors.NewConflict(schema.GroupResource{Group: "apps", Resource: "deployments"}, "web", nil)
	})
	b := wait.Backoff{Duration: time.Millisecond, Factor: 1, Steps: 3}
	req := Request{Fields: []fieldpath.Path{path(".spec.replicas")}, From: "kubectl", To: "argocd", Mode: v1alpha1.HandoverApplier}
	_, err := Run(context.Background(), c.Resource(deployGVR).Namespace("ns"), "web", req, Options{DryRun: v1alpha1.DryRunServer, Backoff: &b})
	var ce *write.ConflictsError
	if !errors.As(err, &ce) || n != 3 {
		t.Errorf("err %v after %d patches, want a ConflictsError after 3", err, n)
	}
}

func TestSafe(t *testing.T) {
	held := applySpec(DefaultTempManager, "{replicas: 2}")
	tests := []struct {
		name        string
		ops         []scenario.Op
		lastApplied string
		want        bool
	}{
		{name: "held by the temporary manager only", ops: []scenario.Op{held}, want: true},
		{name: "and by a controller", ops: []scenario.Op{applySpec("kubectl", "{paused: false}"), scale("kube-controller-manager", 2), held}, want: true},
		{name: "an applier still owns it", ops: []scenario.Op{held, applySpec("argocd", "{replicas: 2}")}},
		{name: "a last-applied annotation holds it", ops: []scenario.Op{held}, lastApplied: `{"spec":{"replicas":2}}`},
		{name: "a last-applied annotation without it", ops: []scenario.Op{held}, lastApplied: `{"spec":{"paused":false}}`, want: true},
		{name: "an unreadable last-applied annotation", ops: []scenario.Op{held}, lastApplied: `{not json`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			live := web(t, tt.ops...)
			if tt.lastApplied != "" {
				live.SetAnnotations(map[string]string{"kubectl.kubernetes.io/last-applied-configuration": tt.lastApplied})
			}
			req := Request{From: "kubectl", To: "kube-controller-manager", TempManager: DefaultTempManager}
			if got := safe(live, req, []fieldpath.Path{path(".spec.replicas")}); got != tt.want {
				t.Errorf("safe = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestRunReportsItsFailure: a write the server refuses ends the report
// failed, its message naming the object and the reworded API error; the
// warning of a controller that won't write the fields is said in a
// handover to a controller only.
func TestRunReportsItsFailure(t *testing.T) {
	live := web(t, kubectlApply)
	live.SetResourceVersion("10")
	c := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{deployGVR: "DeploymentList"}, live)
	c.PrependReactor("patch", "deployments", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "apps", Resource: "deployments"}, "web", errors.New("no"))
	})
	friendly := func(err error) error { return fmt.Errorf("%w (reworded)", err) }
	req := Request{Fields: []fieldpath.Path{path(".spec.replicas")}, From: "kubectl", To: "argocd", Mode: v1alpha1.HandoverApplier}
	r, err := Run(context.Background(), c.Resource(deployGVR).Namespace("ns"), "web", req, Options{Friendly: friendly, NoControllerWarning: "no HPA"})
	if !apierrors.IsForbidden(err) || r == nil {
		t.Fatalf("err %v, report %v", err, r)
	}
	if r.Status != v1alpha1.HandoverFailed || !strings.HasPrefix(r.Message, "Deployment/ns/web: ") || !strings.HasSuffix(r.Message, "(reworded)") {
		t.Errorf("status %q message %q", r.Status, r.Message)
	}
	if len(r.Warnings) != 0 {
		t.Errorf("an applier handover warns of a controller: %v", r.Warnings)
	}

	req = Request{Fields: []fieldpath.Path{path(".spec.replicas")}, From: "kubectl", To: "kube-controller-manager", Mode: v1alpha1.HandoverController}
	r, err = Run(context.Background(), c.Resource(deployGVR).Namespace("ns"), "web", req, Options{DryRun: v1alpha1.DryRunClient, NoControllerWarning: "no HPA"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"no HPA"}, r.Warnings); diff != "" {
		t.Errorf("warnings of a planned handover to a controller (-want +got):\n%s", diff)
	}
}

func TestFailureMessageNamesTheFix(t *testing.T) {
	err := &Error{Msg: "the annotation is not JSON", Fix: []string{"kubectl", "annotate", "deployment.v1.apps/web", "x-", "-n", "my ns"}}
	got := FailureMessage(err, "Deployment/ns/web", Options{CommandFlags: []string{"--context=prod"}})
	if want := `the annotation is not JSON: kubectl annotate --context=prod deployment.v1.apps/web x- -n 'my ns'`; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// ctxClient refuses requests on a done context, as a real client does
// (the fake client ignores contexts).
type ctxClient struct {
	dynamic.ResourceInterface
	sent int
}

func (c *ctxClient) Get(ctx context.Context, name string, o metav1.GetOptions, sub ...string) (*unstructured.Unstructured, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return c.ResourceInterface.Get(ctx, name, o, sub...)
}

func (c *ctxClient) Patch(ctx context.Context, name string, pt types.PatchType, data []byte, o metav1.PatchOptions, sub ...string) (*unstructured.Unstructured, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c.sent++
	return c.ResourceInterface.Patch(ctx, name, pt, data, o, sub...)
}

// TestRunStopsBetweenObjectsNotSteps: a signal (the context cancelled)
// during a handover's first write lets its release be written too, so no
// object is left shared by both managers; before the first write, nothing
// is written and the cancellation comes back.
func TestRunStopsBetweenObjectsNotSteps(t *testing.T) {
	req := Request{Fields: []fieldpath.Path{path(".spec.replicas")}, From: "kubectl", To: "argocd", Mode: v1alpha1.HandoverApplier}
	newClient := func(onPatch func()) *ctxClient {
		live := web(t, kubectlApply)
		live.SetResourceVersion("10")
		rv := 10
		f := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{deployGVR: "DeploymentList"}, live)
		f.PrependReactor("patch", "deployments", func(a clienttesting.Action) (bool, runtime.Object, error) {
			onPatch()
			rv++
			var ops []write.PatchOp
			if err := json.Unmarshal(a.(clienttesting.PatchActionImpl).GetPatch(), &ops); err != nil {
				t.Fatal(err)
			}
			out := live.DeepCopy()
			for _, op := range ops {
				if op.Path == "/metadata/managedFields" {
					b, _ := json.Marshal(op.Value)
					var entries []metav1.ManagedFieldsEntry
					_ = json.Unmarshal(b, &entries)
					out.SetManagedFields(entries)
				}
			}
			out.SetResourceVersion(fmt.Sprint(rv))
			live = out
			if err := f.Tracker().Update(deployGVR, out, "ns"); err != nil {
				t.Fatal(err)
			}
			return true, out, nil
		})
		return &ctxClient{ResourceInterface: f.Resource(deployGVR).Namespace("ns")}
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := newClient(cancel) // the signal lands during the share
	r, err := Run(ctx, c, "web", req, Options{})
	if err != nil || c.sent != 2 {
		t.Fatalf("err %v after %d patches, want the share and its release", err, c.sent)
	}
	if diff := cmp.Diff("share:argocd release:kubectl", steps(r)); diff != "" {
		t.Errorf("steps (-want +got):\n%s", diff)
	}

	c = newClient(func() {})
	r, err = Run(ctx, c, "web", req, Options{})
	if !errors.Is(err, context.Canceled) || c.sent != 0 {
		t.Fatalf("err %v after %d patches, want context.Canceled before any", err, c.sent)
	}
	if r != nil {
		t.Errorf("a report for a handover that did not start: %+v", r)
	}
}
