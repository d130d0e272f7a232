// Package source adapts a cluster to the engines of pkg/: the source
// that reads live objects, schemas, autoscalers and served versions for
// the prediction of an apply (Reader), and sends its dry runs.
package source

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/managedfields"
	utilversion "k8s.io/apimachinery/pkg/util/version"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/kubectl-ssa/kubectl-ssa/internal/kube"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/conflict"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
)

// Cluster reads live objects, schemas and served versions from a
// cluster, and can dry-run applies there.
type Cluster struct {
	Cluster *kube.Cluster
	Loader  *conflict.Loader
	// hpas memoizes Autoscalers per namespace. Unlike Loader, which
	// makes a Cluster unsafe for concurrent use, it is guarded:
	// Reader.Read lists autoscalers while it reads the rest.
	hpasMu sync.Mutex
	hpas   map[string][]unstructured.Unstructured
	// minor and patch are the server's Kubernetes version (serverMinor).
	minorOnce sync.Once
	minor     int
	patch     int // -1: not known
	// inputNamespaces are the Namespaces the input applies before the
	// object at hand (NoteApplied), with their labels.
	inputNamespaces map[string]map[string]string
	// failedNamespaces are the Namespaces of the input whose apply fails.
	failedNamespaces map[string]bool
	// inputKinds are the kinds the CRDs of the input, earlier than the
	// object at hand, serve once applied (the CRD's name).
	inputKinds map[schema.GroupKind]string
	// admission is the cluster's admission, read once (Admission).
	admission admissionState
	// who is the user the credentials are, for policies (user).
	who userState
	// waiting is the policy evaluator started ahead; paramReads the
	// policies' params read.
	waiting    waiting
	paramReads paramReads
	// clock is the run's time for the companion (evaluate).
	clock companionClock
	// podCreates tells, by Pod, whether its apply creates it (Target);
	// podReadCache holds what a Pod's create reads (podRead); podInputs
	// are the objects of the input such a read finds (notePodInput).
	podCreates   sync.Map
	podReadCache sync.Map
	podInputs    map[schema.GroupKind][]*unstructured.Unstructured
	// namespaces are the namespaces read in this run (namespace).
	nsMu       sync.Mutex
	namespaces map[string]namespaceRead
	// dryRunner sends --verify's dry runs (dryRunClient).
	dryRunOnce sync.Once
	dryRunner  dynamic.Interface
	dryRunErr  error
}

// namespaceRead is one read of a namespace.
type namespaceRead struct {
	obj *unstructured.Unstructured
	err error
}

// namespace reads namespace ns once a run: the existence check of a
// create and the labels admission matches on share the read.
func (s *Cluster) namespace(ctx context.Context, ns string) (*unstructured.Unstructured, error) {
	s.nsMu.Lock()
	defer s.nsMu.Unlock()
	if r, ok := s.namespaces[ns]; ok {
		return r.obj, r.err
	}
	obj, err := s.Cluster.Dynamic.Resource(namespaceGVR).Get(ctx, ns, metav1.GetOptions{})
	if s.namespaces == nil {
		s.namespaces = map[string]namespaceRead{}
	}
	s.namespaces[ns] = namespaceRead{obj, err}
	return obj, err
}

// NoteApplied records that manifest is applied before the objects asked
// about next, as kubectl apply applies its input in order, and what its
// apply leaves (result; nil when it fails). A Namespace among them exists
// for them, with the labels of that apply, so creating one of them in it
// does not fail; one whose apply fails does not.
func (s *Cluster) NoteApplied(manifest, result *unstructured.Unstructured) {
	if result != nil {
		s.notePodInput(result)
	}
	if manifest.GroupVersionKind().GroupKind() == crdKind {
		// Its kind is served once it is applied (not yet).
		group, _, _ := unstructured.NestedString(manifest.Object, "spec", "group")
		kind, _, _ := unstructured.NestedString(manifest.Object, "spec", "names", "kind")
		if s.inputKinds == nil {
			s.inputKinds = map[schema.GroupKind]string{}
		}
		s.inputKinds[schema.GroupKind{Group: group, Kind: kind}] = manifest.GetName()
		return
	}
	if manifest.GetAPIVersion() != "v1" || manifest.GetKind() != "Namespace" || manifest.GetName() == "" {
		return
	}
	if s.inputNamespaces == nil {
		s.inputNamespaces, s.failedNamespaces = map[string]map[string]string{}, map[string]bool{}
	}
	if result == nil {
		s.failedNamespaces[manifest.GetName()] = true
		return
	}
	// The apiserver labels every namespace with its name.
	labels := map[string]string{}
	for k, v := range result.GetLabels() {
		labels[k] = v
	}
	labels["kubernetes.io/metadata.name"] = result.GetName()
	s.inputNamespaces[result.GetName()] = labels
}

var _ conflict.Source = (*Cluster)(nil)

// NewCluster reads from c, caching schema documents under cacheBase
// (kubectl's --cache-dir; empty: no cache).
func NewCluster(c *kube.Cluster, cacheBase string) *Cluster {
	fetch := func(ctx context.Context, path string) ([]byte, error) {
		// Without a hash the server names no cache lifetime, only an
		// ETag, so an HTTP cache asks again.
		return c.Discovery.RESTClient().Get().AbsPath("/openapi/v3/" + path).Do(ctx).Raw()
	}
	loader := &conflict.Loader{Client: c.Discovery.OpenAPIV3(), CacheDir: conflict.CacheDirFor(cacheBase, c.Config.Host), Fetch: fetch}
	if plain, err := discovery.NewDiscoveryClientForConfig(c.Config); err == nil {
		loader.Get = func(ctx context.Context, serverRelativeURL string) ([]byte, error) {
			u, err := url.Parse(serverRelativeURL)
			if err != nil {
				return nil, err
			}
			req := plain.RESTClient().Get().AbsPath(u.Path).SetHeader("Accept", "application/json")
			for k, vs := range u.Query() {
				for _, v := range vs {
					req = req.Param(k, v)
				}
			}
			return req.Do(ctx).Raw()
		}
	}
	return &Cluster{Cluster: c, Loader: loader}
}

// Resolve is the cluster's Reader.Resolve: obj's namespace as Target puts it,
// from the discovery Target reads too, and the schema of obj's
// group-version read meanwhile. A Pod's admission waits for Target, which
// finds whether the apply creates it.
func (s *Cluster) Resolve(ctx context.Context, obj *unstructured.Unstructured) bool {
	// (A kind discovery does not know yet is left to Target, which reads
	// discovery again once.)
	m := s.Cluster.Resolved(obj)
	if m == nil {
		return false
	}
	s.Loader.PrefetchDocuments(ctx, obj.GroupVersionKind().GroupVersion())
	return m.Resource.GroupResource() != pods
}

// Target implements conflict.Source.
func (s *Cluster) Target(ctx context.Context, obj *unstructured.Unstructured) (*conflict.Target, error) {
	// A custom resource's CRD (its storage version, its conversion) is
	// read while the live object is.
	var crdRead errgroup.Group
	var crd *crdResult
	if conflict.IsCustom(obj.GroupVersionKind()) {
		if m, err := s.Cluster.Mapping(obj.GroupVersionKind()); err == nil {
			crd = &crdResult{}
			crdRead.Go(func() error {
				crd.crd, crd.err = s.Cluster.Dynamic.Resource(crdGVR).Get(ctx, m.Resource.GroupResource().String(), metav1.GetOptions{})
				return nil
			})
		}
	}
	live, m, err := s.Cluster.Live(ctx, obj)
	if err != nil {
		_ = crdRead.Wait()
		var notServed *kube.NotServedError
		if crd := s.inputKinds[obj.GroupVersionKind().GroupKind()]; crd != "" && errors.As(err, &notServed) {
			return nil, fmt.Errorf("%s: its kind is served by CustomResourceDefinition %s, earlier in the input and not applied yet: apply the CRD first (its kind can't be predicted before it exists), then ask again", kube.ObjectName(obj), crd)
		}
		return nil, err
	}
	var notes []string
	unverifiable := ""
	inInput := s.inputNamespaces[obj.GetNamespace()]
	if m.Scope.Name() == meta.RESTScopeNameNamespace && (live == nil || inInput != nil) {
		// The apiserver refuses a create in a namespace that does not
		// exist (a user who may not read namespaces is not told); a
		// Namespace earlier in the input exists by then, with the labels
		// of that apply, which the server's dry run, sent now, would not
		// see.
		nsLive, err := s.namespace(ctx, obj.GetNamespace())
		switch {
		case apierrors.IsNotFound(err) && inInput != nil:
			notes = append(notes, fmt.Sprintf("namespace %q does not exist yet: the input creates it before this object, as kubectl apply applies it in order", obj.GetNamespace()))
			unverifiable = fmt.Sprintf("namespace %q does not exist yet (the input creates it): the server can't dry-run a create in it", obj.GetNamespace())
		case apierrors.IsNotFound(err) && s.failedNamespaces[obj.GetNamespace()]:
			return nil, fmt.Errorf("%s: namespace %q not found, and its apply earlier in the input fails (see above): this apply would fail too", kube.ObjectName(obj), obj.GetNamespace())
		case apierrors.IsNotFound(err):
			return nil, fmt.Errorf("%s: namespace %q not found: the apply would fail (create the namespace first, or put it before the object in the input)", kube.ObjectName(obj), obj.GetNamespace())
		case inInput != nil && (err != nil || !maps.Equal(nsLive.GetLabels(), inInput)):
			unverifiable = fmt.Sprintf("the input changes namespace %q's labels before this object: the server's dry run, sent now, would see the old ones", obj.GetNamespace())
		}
	}
	if m.Resource.GroupResource() == pods {
		// Admission reads for a Pod's create only.
		s.podCreates.Store(kube.ObjectName(obj), live == nil)
		if live == nil && unverifiable == "" {
			unverifiable = s.podUnverifiable(obj)
		}
	}
	t := &conflict.Target{Live: live, HasStatus: s.Cluster.HasSubresource(m, "status"), Notes: notes, Unverifiable: unverifiable}
	if !conflict.IsCustom(obj.GroupVersionKind()) && conflict.NeedsServerMinor(obj.GroupVersionKind()) {
		t.ServerMinor = s.serverMinor()
	}
	// Only a manifest holding a {} asks the server's version for it.
	if live != nil && conflict.HasEmptyMap(obj.Object) {
		t.KeepsEmptiedMaps = s.keepsEmptiedMaps()
	}
	if crd != nil {
		_ = crdRead.Wait()
		res := crd
		switch {
		case res.err != nil && otherVersions(obj, live):
			t.Notes = append(t.Notes, fmt.Sprintf("could not read the CustomResourceDefinition %s (%v): managers recorded at other versions are compared as if no conversion webhook converted them; check with --verify", m.Resource.GroupResource(), s.Cluster.Friendly(res.err)))
		case res.err == nil:
			strategy, _, _ := unstructured.NestedString(res.crd.Object, "spec", "conversion", "strategy")
			t.ConversionWebhook = strategy == "Webhook" && otherVersions(obj, live)
			t.Storage = conflict.StorageSchema(res.crd, obj.GroupVersionKind())
		}
	}
	return t, nil
}

// serverMinor is the apiserver's Kubernetes minor, read once; 0 when it
// can't be read (the tables' own defaults are then used).
func (s *Cluster) serverMinor() int {
	s.minorOnce.Do(func() {
		s.patch = -1
		v, err := s.Cluster.Discovery.ServerVersion()
		if err != nil || v.Major != "1" {
			return
		}
		if n, err := strconv.Atoi(strings.TrimSuffix(v.Minor, "+")); err == nil {
			s.minor = n
		}
		if gv, err := utilversion.ParseGeneric(v.GitVersion); err == nil {
			s.patch = int(gv.Patch())
		}
	})
	return s.minor
}

// keepsEmptiedMaps tells whether the server keeps a map an apply empties
// (conflict.KeepsEmptiedMaps).
func (s *Cluster) keepsEmptiedMaps() bool {
	minor := s.serverMinor()
	return s.patch >= 0 && conflict.KeepsEmptiedMaps(minor, s.patch)
}

// otherVersions tells whether a manager of live was recorded at another
// apiVersion than obj's.
func otherVersions(obj, live *unstructured.Unstructured) bool {
	if live == nil {
		return false
	}
	for _, e := range ownership.Heads(live) {
		if e.APIVersion != obj.GetAPIVersion() {
			return true
		}
	}
	return false
}

// crdResult is the read of a custom resource's CRD.
type crdResult struct {
	crd *unstructured.Unstructured
	err error
}

var namespaceGVR = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}

var crdKind = schema.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}

var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// Schema implements conflict.Source: the cluster's OpenAPI v3 documents.
func (s *Cluster) Schema(ctx context.Context, applied, live *unstructured.Unstructured) (managedfields.TypeConverter, string, error) {
	gvs := []schema.GroupVersion{applied.GroupVersionKind().GroupVersion()}
	if live != nil {
		for _, e := range ownership.Heads(live) {
			if gv, err := schema.ParseGroupVersion(e.APIVersion); err == nil {
				gvs = append(gvs, gv)
			}
		}
	}
	sch, err := s.Loader.Load(ctx, gvs)
	if err != nil {
		// Not fatal: the caller falls back to another schema and says why.
		return nil, err.Error(), nil //nolint:nilerr // the error becomes the reason in the report
	}
	// The index may name an older document, or none, for a group-version a
	// CRD has just added or changed (the aggregator reads it again a
	// second later): the current one is read once, for the applied
	// version and for each version a manager of the kind recorded that
	// the server serves (left out, its managers would be dropped, which
	// the server does only for versions it does not serve).
	kind := applied.GroupVersionKind()
	refreshed, published := false, true
	seen := map[schema.GroupVersion]bool{}
	for i, gv := range gvs { // gvs[0] is the applied version
		gvk := gv.WithKind(kind.Kind)
		if seen[gv] || sch.Has(gvk) || gv.Group != kind.Group {
			continue
		}
		// (The applied kind is served: Target found its resource.)
		served := i == 0 || s.Cluster.ServedKind(gvk)
		if !served {
			continue
		}
		seen[gv] = true
		ok, err := s.Loader.Refresh(ctx, gv, true)
		if err != nil {
			return nil, err.Error(), nil //nolint:nilerr // as above
		}
		refreshed = refreshed || ok
		published = published && (ok || i > 0)
	}
	if refreshed {
		if sch, err = s.Loader.Load(ctx, gvs); err != nil {
			return nil, err.Error(), nil //nolint:nilerr // as above
		}
	}
	if !published || !sch.Has(kind) {
		return nil, "the cluster does not publish one", nil
	}
	return sch, "", nil
}

// ScaleSchema implements conflict.Source: the Scale type comes with the parent's
// group-version document.
func (s *Cluster) ScaleSchema(ctx context.Context, gvk schema.GroupVersionKind) (managedfields.TypeConverter, error) {
	return s.Loader.Load(ctx, []schema.GroupVersion{gvk.GroupVersion(), {Group: "autoscaling", Version: "v1"}})
}

// Served implements conflict.Source.
func (s *Cluster) Served() func(schema.GroupVersionKind) bool { return s.Cluster.ServedKind }

// warningsKept keeps the warnings the server returns to one request.
type warningsKept struct {
	mu   sync.Mutex
	list []string
}

type warningsKey struct{}

// warningsToContext hands each warning to the warningsKept of its
// request's context.
type warningsToContext struct{}

func (warningsToContext) HandleWarningHeaderWithContext(ctx context.Context, _ int, _ string, text string) {
	if w, ok := ctx.Value(warningsKey{}).(*warningsKept); ok {
		w.mu.Lock()
		w.list = append(w.list, text)
		w.mu.Unlock()
	}
}

// dryRunClient is the client of --verify's dry runs, made once: it keeps
// the server's warnings for the report instead of printing them.
func (s *Cluster) dryRunClient() (dynamic.Interface, error) {
	s.dryRunOnce.Do(func() {
		cfg := rest.CopyConfig(s.Cluster.Config)
		cfg.WarningHandler, cfg.WarningHandlerWithContext = nil, warningsToContext{}
		s.dryRunner, s.dryRunErr = dynamic.NewForConfig(cfg)
	})
	return s.dryRunner, s.dryRunErr
}

// Server is the cluster as conflict.Verify asks it.
func (s *Cluster) Server() conflict.Server {
	return conflict.Server{Apply: s.DryRunApply, Write: s.DryRunWrite}
}

// DryRunApply sends an apply as a dry run, with the server's warnings
// (conflict.Server.Apply).
func (s *Cluster) DryRunApply(ctx context.Context, obj, body *unstructured.Unstructured, o metav1.ApplyOptions, subresource string) (*unstructured.Unstructured, []string, error) {
	var subs []string
	if subresource != "" {
		subs = []string{subresource}
	}
	return s.dryRun(ctx, obj, func(ctx context.Context, ri dynamic.ResourceInterface) (*unstructured.Unstructured, error) {
		return ri.Apply(ctx, obj.GetName(), body, o, subs...)
	})
}

// DryRunWrite sends a client-side write as a dry run
// (conflict.Server.Write).
func (s *Cluster) DryRunWrite(ctx context.Context, obj *unstructured.Unstructured, patch []byte, pt types.PatchType, manager string) (*unstructured.Unstructured, []string, error) {
	dry := []string{metav1.DryRunAll}
	return s.dryRun(ctx, obj, func(ctx context.Context, ri dynamic.ResourceInterface) (*unstructured.Unstructured, error) {
		if patch == nil {
			return ri.Create(ctx, obj, metav1.CreateOptions{FieldManager: manager, DryRun: dry})
		}
		return ri.Patch(ctx, obj.GetName(), pt, patch, metav1.PatchOptions{FieldManager: manager, DryRun: dry})
	})
}

// dryRun sends one dry run to the object obj names, keeping the server's
// warnings.
func (s *Cluster) dryRun(ctx context.Context, obj *unstructured.Unstructured, send func(context.Context, dynamic.ResourceInterface) (*unstructured.Unstructured, error)) (*unstructured.Unstructured, []string, error) {
	_, m, err := s.Cluster.Resource(obj)
	if err != nil {
		return nil, nil, err
	}
	dyn, err := s.dryRunClient()
	if err != nil {
		return nil, nil, err
	}
	var ri dynamic.ResourceInterface = dyn.Resource(m.Resource)
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		ri = dyn.Resource(m.Resource).Namespace(obj.GetNamespace())
	}
	kept := &warningsKept{}
	out, err := send(context.WithValue(ctx, warningsKey{}, kept), ri)
	kept.mu.Lock()
	defer kept.mu.Unlock()
	if apierrors.IsForbidden(err) {
		// RBAC's refusal with the command that checks it.
		err = s.Cluster.Friendly(err)
	}
	return out, kept.list, err
}

var hpaGVR = schema.GroupVersionResource{Group: "autoscaling", Version: "v2", Resource: "horizontalpodautoscalers"}

// Autoscalers implements conflict.AutoscalerLister, reading autoscaling/v2 (HPAs
// made at v1 are served at v2 too), once per namespace and run: many
// manifests of one namespace share the list.
func (s *Cluster) Autoscalers(ctx context.Context, namespace string) ([]unstructured.Unstructured, error) {
	s.hpasMu.Lock()
	defer s.hpasMu.Unlock()
	if items, ok := s.hpas[namespace]; ok {
		return items, nil
	}
	list, err := s.Cluster.Dynamic.Resource(hpaGVR).Namespace(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	if s.hpas == nil {
		s.hpas = map[string][]unstructured.Unstructured{}
	}
	s.hpas[namespace] = list.Items
	return list.Items, nil
}
