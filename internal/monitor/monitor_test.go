package monitor

import (
	"context"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"golang.org/x/sync/errgroup"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	metadatafake "k8s.io/client-go/metadata/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/record"

	"github.com/kubectl-ssa/kubectl-ssa/internal/kube"
	"github.com/kubectl-ssa/kubectl-ssa/internal/scenario"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/audit"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/fight"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
)

const web = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: nginx:1}]}
`

var deployments = kube.Resource{GVR: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, Kind: "Deployment", Namespaced: true}

// rig is a Monitor fed by hand, as its informers would, with versions
// written by the apiserver's field manager (internal/scenario).
type rig struct {
	t      *testing.T
	mon    *Monitor
	h      handler
	events *record.FakeRecorder
	state  *scenario.State
	last   *metav1.PartialObjectMetadata
	rv     int
	now    time.Time
}

func newRig(t *testing.T) *rig {
	t.Helper()
	r := &rig{t: t, events: record.NewFakeRecorder(100), state: &scenario.State{}, now: time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)}
	sch := runtime.NewScheme()
	_ = metav1.AddMetaToScheme(sch)
	cfg := Config{Kinds: []kube.Resource{deployments}, Fight: fight.Options{MinFlips: 3, Window: time.Minute},
		Audit:  audit.Options{LastAppliedThreshold: audit.DefaultLastAppliedThreshold},
		Events: r.events, Now: func() time.Time { return r.now }}
	mon, err := New(metadatafake.NewSimpleMetadataClient(sch), cfg, NewMetrics(prometheus.NewRegistry()))
	if err != nil {
		t.Fatal(err)
	}
	r.mon, r.h = mon, handler{mon, deployments}
	return r
}

// write runs op and hands the new version to the monitor.
func (r *rig) write(op scenario.Op) {
	r.t.Helper()
	r.state.Run(r.t, op)
	r.rv++
	r.now = r.now.Add(5 * time.Second)
	u := r.state.Live
	meta := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: u.GetName(), Namespace: u.GetNamespace(), UID: "uid-web",
		ResourceVersion: strconv.Itoa(r.rv), ManagedFields: u.GetManagedFields(), Annotations: u.GetAnnotations(), Labels: u.GetLabels()}}
	stripped, _ := strip(audit.DefaultLastAppliedThreshold)(meta)
	if r.last == nil {
		r.h.OnAdd(stripped, true)
	} else {
		r.h.OnUpdate(r.last, stripped)
	}
	r.last = stripped.(*metav1.PartialObjectMetadata)
}

// reasons drains the Events recorded so far.
func (r *rig) reasons() []string {
	var out []string
	for {
		select {
		case e := <-r.events.Events:
			if !strings.HasPrefix(e, "Warning ") || !strings.Contains(e, "; fix: ") || !strings.Contains(e, "kubectl ssa ") {
				r.t.Errorf("event without a fix: %s", e)
			}
			out = append(out, strings.Fields(e)[1])
		default:
			return out
		}
	}
}

func (r *rig) policies() []string {
	var out []string
	for _, res := range r.mon.report("shop").results {
		out = append(out, res["policy"].(string)+" "+res["result"].(string))
	}
	return out
}

// TestMonitorFinds: a hand edit, kubectl scale, a forced takeover and a
// fight, each as the counters, the gauge, an Event with its fix and the
// namespace's report show it; a deletion takes the object's findings
// away.
func TestMonitorFinds(t *testing.T) {
	r := newRig(t)
	m := r.mon.metrics
	r.write(scenario.Apply{Manager: "gitops", Manifest: web})
	if got := testutil.ToFloat64(m.Objects.WithLabelValues("Deployment")); got != 1 {
		t.Errorf("objects %v, want 1", got)
	}
	r.write(scenario.Update{Manager: "kubectl", Subresource: "scale", Mutate: scenario.Set(int64(4), "spec", "replicas")})
	r.write(scenario.Update{Manager: "kubectl-edit", Mutate: scenario.Set([]any{map[string]any{"name": "web", "image": "nginx:2"}}, "spec", "template", "spec", "containers")})
	if diff := cmp.Diff([]string{ReasonEdit, ReasonEdit}, r.reasons()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	for _, mgr := range []string{"kubectl", "kubectl-edit"} {
		if got := testutil.ToFloat64(m.ManualEdits.WithLabelValues("shop", "Deployment", mgr)); got != 1 {
			t.Errorf("manual edits by %s: %v, want 1", mgr, got)
		}
	}
	if got := testutil.ToFloat64(m.Findings.WithLabelValues("shop", "Deployment", "manual-edit", "warning")); got != 2 {
		t.Errorf("manual-edit findings %v, want 2", got)
	}
	if diff := cmp.Diff([]string{"manual-edit warn", "manual-edit warn"}, r.policies()); diff != "" {
		t.Errorf("report results (-want +got):\n%s", diff)
	}

	// ci forces its image over the hand edit, then gitops and ci force
	// theirs in turn: takeovers, and a fight from the third move on.
	ci := scenario.Apply{Manager: "ci", Force: true, Manifest: strings.Replace(web, "nginx:1", "nginx:3", 1)}
	gitops := scenario.Apply{Manager: "gitops", Force: true, Manifest: web}
	r.write(ci)
	r.write(gitops)
	r.write(ci)
	got := r.reasons()
	if diff := cmp.Diff([]string{ReasonTakeover, ReasonFight, ReasonTakeover, ReasonFight}, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	for _, mgr := range []string{"gitops", "ci"} {
		// ci's first took the image from kubectl-edit, no applier.
		if got := testutil.ToFloat64(m.ForcedTakeovers.WithLabelValues("shop", "Deployment", mgr)); got != 1 {
			t.Errorf("forced takeovers by %s: %v, want 1", mgr, got)
		}
		if got := testutil.ToFloat64(m.Fights.WithLabelValues("shop", "Deployment", mgr)); got != 1 {
			t.Errorf("fight flips by %s: %v, want 1", mgr, got)
		}
	}
	pols := r.policies()
	for _, want := range []string{"forced-takeover warn", "ownership-fight fail"} {
		if !strings.Contains(strings.Join(pols, "\n"), want) {
			t.Errorf("report results %v lack %q", pols, want)
		}
	}

	// Past the window, the fight and takeovers leave the report.
	r.now = r.now.Add(2 * time.Minute)
	r.mon.expire()
	if pols := strings.Join(r.policies(), "\n"); strings.Contains(pols, "fight") || strings.Contains(pols, "takeover") {
		t.Errorf("results after the window: %s", pols)
	}

	r.h.OnDelete(r.last)
	if n := testutil.CollectAndCount(m.Findings); n != 0 {
		t.Errorf("%d findings series after the deletion, want none", n)
	}
	if got := testutil.ToFloat64(m.Objects.WithLabelValues("Deployment")); got != 0 {
		t.Errorf("objects %v, want 0", got)
	}
	if len(r.mon.objects) != 0 || !r.mon.dirty["shop"] {
		t.Errorf("after the deletion: %d objects kept, dirty %v", len(r.mon.objects), r.mon.dirty)
	}
}

// TestStrip: the store keeps managedFields, identity and the tools'
// marks; a last-applied annotation under the threshold only its kind.
func TestStrip(t *testing.T) {
	in := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop", UID: "u", ResourceVersion: "7",
		Labels: map[string]string{"app": "web", "app.kubernetes.io/managed-by": "Helm"},
		Annotations: map[string]string{"note": strings.Repeat("x", 1000), "meta.helm.sh/release-name": "shop",
			ownership.LastAppliedAnnotation: `{"apiVersion":"apps/v1","kind":"Deployment","spec":{"replicas":2}}`},
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "helm", Operation: metav1.ManagedFieldsOperationApply}}}}
	out, err := strip(100)(in)
	if err != nil {
		t.Fatal(err)
	}
	want := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop", UID: "u", ResourceVersion: "7",
		Labels:        map[string]string{"app.kubernetes.io/managed-by": "Helm"},
		Annotations:   map[string]string{"meta.helm.sh/release-name": "shop", ownership.LastAppliedAnnotation: `{"kind":"Deployment"}`},
		ManagedFields: in.ManagedFields}}
	if diff := cmp.Diff(want, out); diff != "" {
		t.Errorf("stripped (-want +got):\n%s", diff)
	}
	if out, _ := strip(10)(in); out.(*metav1.PartialObjectMetadata).Annotations[ownership.LastAppliedAnnotation] != in.Annotations[ownership.LastAppliedAnnotation] {
		t.Error("a last-applied annotation over the threshold (a finding) was not kept whole")
	}
}

// TestReady: not ready before every kind is listed.
func TestReady(t *testing.T) {
	r := newRig(t)
	if err := r.mon.Ready(context.Background()); err == nil || !strings.Contains(err.Error(), "deployments.apps not listed yet") {
		t.Errorf("Ready before the listing: %v", err)
	}
}

// TestMonitorAcrossExpiredWatch: the watch ends with 410 Gone (its
// resourceVersion compacted away) while the object changed; the informer
// lists again and the change is seen, as one write.
func TestMonitorAcrossExpiredWatch(t *testing.T) {
	s := (&scenario.State{}).Run(t, scenario.Apply{Manager: "gitops", Manifest: web})
	meta := func(rv string) *metav1.PartialObjectMetadata {
		return &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
			ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop", UID: "uid-web", ResourceVersion: rv, ManagedFields: s.Live.GetManagedFields()}}
	}
	sch := runtime.NewScheme()
	_ = metav1.AddMetaToScheme(sch)
	client := metadatafake.NewSimpleMetadataClient(sch, meta("1"))
	first := watch.NewFake()
	var watches atomic.Int32
	client.PrependWatchReactor("deployments", func(clienttesting.Action) (bool, watch.Interface, error) {
		return watches.Add(1) == 1, first, nil
	})
	metrics := NewMetrics(prometheus.NewRegistry())
	mon, err := New(client, Config{Kinds: []kube.Resource{deployments}, Namespace: "shop", Fight: fight.Options{MinFlips: 3, Window: time.Minute},
		Audit: audit.Options{LastAppliedThreshold: audit.DefaultLastAppliedThreshold}}, metrics)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var g errgroup.Group
	g.Go(func() error { return mon.Run(ctx) })
	defer func() {
		cancel()
		if err := g.Wait(); err != nil {
			t.Error(err)
		}
	}()
	waitFor(t, func() bool { return mon.Ready(ctx) == nil && watches.Load() == 1 })

	// kubectl scale, unseen by the watch, which then expires.
	s.Run(t, scenario.Update{Manager: "kubectl", Subresource: "scale", Mutate: scenario.Set(int64(4), "spec", "replicas")})
	if err := client.Tracker().Update(deployments.GVR, meta("2"), "shop"); err != nil {
		t.Fatal(err)
	}
	first.Error(&apierrors.NewResourceExpired("too old resource version: 1 (2)").ErrStatus)
	waitFor(t, func() bool {
		return testutil.ToFloat64(metrics.ManualEdits.WithLabelValues("shop", "Deployment", "kubectl")) == 1
	})
}

func waitFor(t *testing.T, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatal("not within a minute")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

var namespaces = kube.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, Kind: "Namespace"}

// TestMonitorNamespaceGone: when a namespace is deleted, its counters'
// series go with it (namespaces come and go: CI's, previews'), the other
// namespaces' stay.
func TestMonitorNamespaceGone(t *testing.T) {
	r := newRig(t)
	m := r.mon.metrics
	r.write(scenario.Apply{Manager: "gitops", Manifest: web})
	r.write(scenario.Update{Manager: "kubectl", Subresource: "scale", Mutate: scenario.Set(int64(4), "spec", "replicas")})
	m.ManualEdits.WithLabelValues("other", "Deployment", "kubectl").Inc()
	m.Fights.WithLabelValues("shop", "Deployment", "kubectl").Inc()
	m.ForcedTakeovers.WithLabelValues("shop", "Deployment", "kubectl").Inc()
	r.h.OnDelete(r.last)
	handler{r.mon, namespaces}.OnDelete(&metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "shop", UID: "uid-shop"}})
	for name, c := range map[string]*prometheus.CounterVec{"fights": m.Fights, "manual edits": m.ManualEdits, "takeovers": m.ForcedTakeovers} {
		if n := testutil.CollectAndCount(c); name == "manual edits" && n != 1 || name != "manual edits" && n != 0 {
			t.Errorf("%s: %d series left after the namespace's deletion", name, n)
		}
	}
	if got := testutil.ToFloat64(m.ManualEdits.WithLabelValues("other", "Deployment", "kubectl")); got != 1 {
		t.Errorf("another namespace's series: %v, want 1", got)
	}
}

// TestMonitorNoReportCRD: without the PolicyReport CRD, the monitor says
// so once, with what to do, rather than a line per write, and writes the
// reports once the CRD is there.
func TestMonitorNoReportCRD(t *testing.T) {
	r := newRig(t)
	var logged []string
	r.mon.cfg.Log = func(s string) { logged = append(logged, s) }
	client := dynamicfake.NewSimpleDynamicClient(runtime.NewScheme())
	var installed atomic.Bool
	var applied atomic.Int32
	client.PrependReactor("patch", "policyreports", func(clienttesting.Action) (bool, runtime.Object, error) {
		if !installed.Load() {
			return true, nil, apierrors.NewNotFound(schema.GroupResource{}, "")
		}
		applied.Add(1)
		return true, nil, nil
	})
	r.mon.cfg.Reports = client
	r.write(scenario.Apply{Manager: "gitops", Manifest: web})
	r.write(scenario.Update{Manager: "kubectl", Subresource: "scale", Mutate: scenario.Set(int64(4), "spec", "replicas")})
	for range 3 {
		r.mon.tick(context.Background())
	}
	if len(logged) != 1 || !strings.Contains(logged[0], "CRD") || !strings.Contains(logged[0], "--policy-reports=false") {
		t.Errorf("logged %q, want one line naming the CRD and --policy-reports=false", logged)
	}
	installed.Store(true)
	r.mon.tick(context.Background())
	if applied.Load() != 1 {
		t.Errorf("%d reports written once the CRD is installed, want 1", applied.Load())
	}
}
