package monitor

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	"github.com/kubectl-ssa/kubectl-ssa/internal/kube"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/audit"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/fight"
)

// Config is what a Monitor watches and where it tells what it finds.
type Config struct {
	// Kinds are the kinds to watch (kube.Selection.Kinds), in Namespace
	// ("" for all) and matching LabelSelector.
	Kinds         []kube.Resource
	Namespace     string
	LabelSelector string
	Fight         fight.Options
	// Audit are the checks of every object (Served, LastAppliedThreshold
	// and ClusterFlags matter).
	Audit audit.Options
	// Events records the Events (nil: none).
	Events record.EventRecorder
	// Reports writes the PolicyReports (nil: none), at most once per
	// ReportEvery a namespace.
	Reports     dynamic.Interface
	ReportEvery time.Duration
	// Probe asks the server whether it answers, for Ready.
	Probe func(context.Context) error
	// Log says what happens, a line at a time (standard error).
	Log func(string)
	Now func() time.Time
}

// Monitor watches the kinds of its Config. Its informers call it from
// several goroutines: one lock guards what it found.
type Monitor struct {
	cfg     Config
	metrics *Metrics
	// factories are the informers' of the namespace (namespaced kinds)
	// and of the cluster (cluster-scoped kinds).
	factories map[bool]metadatainformer.SharedInformerFactory
	informers []named

	// lost: the server did not answer Ready's probe.
	lost atomic.Bool

	mu      sync.Mutex
	tracker *fight.Tracker
	objects map[types.UID]*found
	// open counts the findings of each series of kubectl_ssa_findings.
	open map[string]int
	// dirty are the namespaces whose PolicyReport is to be written again
	// ("" is the ClusterPolicyReport).
	dirty map[string]bool
	// noCRD: a report could not be written for want of its CRD (only
	// tick reads and writes it).
	noCRD bool
}

type named struct {
	kind     kube.Resource
	informer cache.SharedIndexInformer
}

// New makes the informers of cfg's kinds; Run starts them.
func New(client metadata.Interface, cfg Config, m *Metrics) (*Monitor, error) {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = func(string) {}
	}
	if cfg.ReportEvery <= 0 {
		cfg.ReportEvery = 3 * time.Second
	}
	mon := &Monitor{cfg: cfg, metrics: m, tracker: fight.New(cfg.Fight), objects: map[types.UID]*found{}, open: map[string]int{}, dirty: map[string]bool{}}
	tweak := func(o *metav1.ListOptions) { o.LabelSelector = cfg.LabelSelector }
	mon.factories = map[bool]metadatainformer.SharedInformerFactory{
		true:  metadatainformer.NewFilteredSharedInformerFactory(client, 0, cfg.Namespace, tweak),
		false: metadatainformer.NewFilteredSharedInformerFactory(client, 0, metav1.NamespaceAll, tweak),
	}
	for _, k := range cfg.Kinds {
		inf := mon.factories[k.Namespaced].ForResource(k.GVR).Informer()
		if err := inf.SetTransform(strip(cfg.Audit.LastAppliedThreshold)); err != nil {
			return nil, err
		}
		if err := inf.SetWatchErrorHandlerWithContext(func(_ context.Context, _ *cache.Reflector, err error) {
			cfg.Log(fmt.Sprintf("the watch of %s failed (%v): it lists again", k.GVR.GroupResource(), err))
		}); err != nil {
			return nil, err
		}
		if _, err := inf.AddEventHandler(handler{mon, k}); err != nil {
			return nil, err
		}
		mon.informers = append(mon.informers, named{k, inf})
		m.Objects.WithLabelValues(k.Kind).Add(0)
	}
	return mon, nil
}

// Run watches until ctx ends, writing the PolicyReports as they change
// and forgetting fights and takeovers older than the window.
func (m *Monitor) Run(ctx context.Context) error {
	for _, f := range m.factories {
		f.Start(ctx.Done())
		defer f.Shutdown()
	}
	synced := make([]cache.InformerSynced, len(m.informers))
	for i, n := range m.informers {
		synced[i] = n.informer.HasSynced
	}
	if !cache.WaitForCacheSync(ctx.Done(), synced...) {
		return nil // stopped
	}
	m.cfg.Log(fmt.Sprintf("watching %s of %s", counted(m.count(), "object"), counted(len(m.informers), "kind")))
	// The first listing's garbage (whole lists decoded at once) goes back
	// to the system now rather than minutes later: a monitor's resident
	// memory is what its store holds.
	debug.FreeOSMemory()
	if m.cfg.Reports != nil {
		m.stale(ctx)
	}
	wait.UntilWithContext(ctx, m.tick, m.cfg.ReportEvery)
	return nil
}

func (m *Monitor) count() int {
	n := 0
	for _, i := range m.informers {
		n += len(i.informer.GetStore().ListKeys())
	}
	return n
}

// Ready tells whether every kind was listed and the server answers: while
// it does not (an apiserver restarting, a network cut), the informers
// retry and see nothing.
func (m *Monitor) Ready(ctx context.Context) error {
	for _, n := range m.informers {
		if !n.informer.HasSynced() {
			return fmt.Errorf("%s not listed yet", n.kind.GVR.GroupResource())
		}
	}
	if m.cfg.Probe == nil {
		return nil
	}
	if err := m.cfg.Probe(ctx); err != nil {
		if !m.lost.Swap(true) {
			m.cfg.Log(fmt.Sprintf("the server does not answer (%v): the watches retry", err))
		}
		return fmt.Errorf("the server does not answer: %w", err)
	}
	if m.lost.Swap(false) {
		m.cfg.Log("the server answers again: the watches list again and carry on")
	}
	return nil
}

// tick expires what is older than the window and writes the reports that
// changed.
func (m *Monitor) tick(ctx context.Context) {
	m.mu.Lock()
	m.expire()
	var reports []report
	if m.cfg.Reports != nil {
		for ns := range m.dirty {
			reports = append(reports, m.report(ns))
		}
	}
	m.dirty = map[string]bool{}
	m.mu.Unlock()
	for i, r := range reports {
		err := r.write(ctx, m.cfg.Reports)
		switch {
		case err == nil:
			m.noCRD = false
		case ctx.Err() != nil:
		case missingCRD(err):
			// Said once; the reports wait for the CRD, tried one a tick.
			if !m.noCRD {
				m.cfg.Log("the PolicyReport CRDs (wgpolicyk8s.io) are not installed: no report is written until they are " +
					"(kubectl apply -f deploy/crds/), or run with --policy-reports=false")
			}
			m.noCRD = true
			m.redo(reports[i:])
			return
		case retry(err):
			m.redo(reports[i : i+1])
			fallthrough
		default:
			m.cfg.Log(err.Error())
		}
	}
}

// redo marks reports to be written again at the next tick.
func (m *Monitor) redo(reports []report) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, r := range reports {
		m.dirty[r.namespace] = true
	}
}

// handler takes the informer's calls for one kind.
type handler struct {
	m    *Monitor
	kind kube.Resource
}

func (h handler) OnAdd(obj any, _ bool) {
	h.locked(obj, func(meta *metav1.PartialObjectMetadata) {
		h.m.metrics.Objects.WithLabelValues(h.kind.Kind).Inc()
		h.m.check(h.kind, meta)
	})
}

func (h handler) OnUpdate(oldObj, newObj any) {
	old, ok := oldObj.(*metav1.PartialObjectMetadata)
	if !ok {
		return
	}
	h.locked(newObj, func(cur *metav1.PartialObjectMetadata) {
		if old.ResourceVersion != cur.ResourceVersion {
			h.m.check(h.kind, cur)
			h.m.changed(h.kind, old, cur)
		}
	})
}

func (h handler) OnDelete(obj any) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	h.locked(obj, func(meta *metav1.PartialObjectMetadata) {
		h.m.metrics.Objects.WithLabelValues(h.kind.Kind).Dec()
		h.m.forget(h.kind, meta)
		if h.kind.GVR.Group == "" && h.kind.GVR.Resource == "namespaces" {
			h.m.metrics.dropNamespace(meta.Name)
		}
	})
}

// locked calls f with obj's metadata under the monitor's lock.
func (h handler) locked(obj any, f func(*metav1.PartialObjectMetadata)) {
	meta, ok := obj.(*metav1.PartialObjectMetadata)
	if !ok {
		return
	}
	h.m.mu.Lock()
	defer h.m.mu.Unlock()
	f(meta)
}

// refOf is an object's reference, with its resource's apiVersion and kind.
func refOf(k kube.Resource, m *metav1.PartialObjectMetadata) v1alpha1.ObjectRef {
	return v1alpha1.ObjectRef{APIVersion: k.GVR.GroupVersion().String(), Kind: k.Kind,
		Namespace: m.Namespace, Name: m.Name, UID: string(m.UID), ResourceVersion: m.ResourceVersion}
}

// event records a Warning on the object.
func (m *Monitor) event(ref v1alpha1.ObjectRef, reason, msg string) {
	if m.cfg.Events == nil {
		return
	}
	m.cfg.Events.Event(&corev1.ObjectReference{APIVersion: ref.APIVersion, Kind: ref.Kind, Namespace: ref.Namespace,
		Name: ref.Name, UID: types.UID(ref.UID), ResourceVersion: ref.ResourceVersion}, corev1.EventTypeWarning, reason, msg)
}

// ErrLostLease is returned when another replica took the lease.
var ErrLostLease = errors.New("lost the leader lease to another replica")

// counted is n and what, plural unless n is 1.
func counted(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
