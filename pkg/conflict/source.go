package conflict

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"

	"github.com/kubectl-ssa/kubectl-ssa/internal/kube"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/defaults"
)

// ClusterSource reads live objects, schemas and served versions from a
// cluster, and can dry-run applies there.
type ClusterSource struct {
	Cluster *kube.Cluster
	Loader  *Loader
	// hpas memoizes Autoscalers per namespace. Unlike Loader, which
	// makes a ClusterSource unsafe for concurrent use, it is guarded:
	// Explain lists autoscalers while it reads the rest.
	hpasMu sync.Mutex
	hpas   map[string][]unstructured.Unstructured
	// minor is the server's Kubernetes minor (serverMinor).
	minorOnce sync.Once
	minor     int
}

var (
	_ Source    = (*ClusterSource)(nil)
	_ DryRunner = (*ClusterSource)(nil)
	_ Source    = (*OfflineSource)(nil)
)

// NewClusterSource reads from c, caching schema documents under cacheBase
// (kubectl's --cache-dir; empty: no cache).
func NewClusterSource(c *kube.Cluster, cacheBase string) *ClusterSource {
	fetch := func(ctx context.Context, path string) ([]byte, error) {
		// Without a hash the server names no cache lifetime, only an
		// ETag, so an HTTP cache asks again.
		return c.Discovery.RESTClient().Get().AbsPath("/openapi/v3/" + path).Do(ctx).Raw()
	}
	return &ClusterSource{Cluster: c, Loader: &Loader{Client: c.Discovery.OpenAPIV3(), CacheDir: CacheDirFor(cacheBase, c.Config.Host), Fetch: fetch}}
}

// Target implements Source.
func (s *ClusterSource) Target(ctx context.Context, obj *unstructured.Unstructured) (*Target, error) {
	// A custom resource's CRD (its storage version, its conversion) is
	// read while the live object is.
	type crdResult struct {
		crd *unstructured.Unstructured
		err error
	}
	var crdDone chan crdResult
	if kube.IsCustom(obj.GroupVersionKind()) {
		if m, err := s.Cluster.Mapping(obj.GroupVersionKind()); err == nil {
			crdDone = make(chan crdResult, 1)
			go func() {
				crd, err := s.Cluster.Dynamic.Resource(crdGVR).Get(ctx, m.Resource.GroupResource().String(), metav1.GetOptions{})
				crdDone <- crdResult{crd, err}
			}()
		}
	}
	live, m, err := s.Cluster.Live(ctx, obj)
	if err != nil {
		if crdDone != nil {
			<-crdDone
		}
		return nil, err
	}
	if live == nil && m.Scope.Name() == meta.RESTScopeNameNamespace {
		// The apiserver refuses a create in a namespace that does not
		// exist; a user who may not read namespaces is not told.
		_, err := s.Cluster.Dynamic.Resource(namespaceGVR).Get(ctx, obj.GetNamespace(), metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("%s: namespace %q not found: the apply would fail (create the namespace first)", kube.ObjectName(obj), obj.GetNamespace())
		}
	}
	t := &Target{Live: live, HasStatus: s.Cluster.HasSubresource(m, "status")}
	if !kube.IsCustom(obj.GroupVersionKind()) && defaults.VersionDependent(obj.GroupVersionKind()) {
		t.ServerMinor = s.serverMinor()
	}
	if crdDone != nil {
		res := <-crdDone
		switch {
		case res.err != nil && otherVersions(obj, live):
			t.Notes = append(t.Notes, fmt.Sprintf("could not read the CustomResourceDefinition %s (%v): managers recorded at other versions are compared as if no conversion webhook converted them; check with --verify", m.Resource.GroupResource(), kube.Friendly(res.err)))
		case res.err == nil:
			strategy, _, _ := unstructured.NestedString(res.crd.Object, "spec", "conversion", "strategy")
			t.ConversionWebhook = strategy == "Webhook" && otherVersions(obj, live)
			t.Storage = StorageSchema(res.crd, obj.GroupVersionKind())
		}
	}
	return t, nil
}

// StorageSchema is the schema a custom resource applied at gvk is pruned
// by when the apiserver stores it at its CRD's storage version: nil when
// gvk is the storage version, when a webhook converts (only it knows what
// the storage version holds), or when the CRD can't be read as one.
func StorageSchema(crd *unstructured.Unstructured, gvk schema.GroupVersionKind) *defaults.Structural {
	strategy, _, _ := unstructured.NestedString(crd.Object, "spec", "conversion", "strategy")
	if strategy == "Webhook" {
		return nil
	}
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	storage := ""
	for _, v := range versions {
		vm, _ := v.(map[string]interface{})
		if st, _ := vm["storage"].(bool); st {
			storage, _ = vm["name"].(string)
		}
	}
	if storage == "" || storage == gvk.Version {
		return nil
	}
	sch, err := CRDSchema(crd)
	if err != nil {
		return nil
	}
	types, tr, ok := sch.TypeOf(gvk.GroupKind().WithVersion(storage))
	if !ok {
		return nil
	}
	return &defaults.Structural{Schema: types, Type: tr}
}

// serverMinor is the apiserver's Kubernetes minor, read once; 0 when it
// can't be read (the tables' own defaults are then used).
func (s *ClusterSource) serverMinor() int {
	s.minorOnce.Do(func() {
		v, err := s.Cluster.Discovery.ServerVersion()
		if err != nil || v.Major != "1" {
			return
		}
		if n, err := strconv.Atoi(strings.TrimSuffix(v.Minor, "+")); err == nil {
			s.minor = n
		}
	})
	return s.minor
}

// otherVersions tells whether a manager of live was recorded at another
// apiVersion than obj's.
func otherVersions(obj, live *unstructured.Unstructured) bool {
	if live == nil {
		return false
	}
	for _, e := range live.GetManagedFields() {
		if e.APIVersion != obj.GetAPIVersion() {
			return true
		}
	}
	return false
}

var namespaceGVR = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}

var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// Schema implements Source: the cluster's OpenAPI v3 documents.
func (s *ClusterSource) Schema(ctx context.Context, applied, live *unstructured.Unstructured) (managedfields.TypeConverter, string, error) {
	gvs := []schema.GroupVersion{applied.GroupVersionKind().GroupVersion()}
	if live != nil {
		for _, e := range live.GetManagedFields() {
			if gv, err := schema.ParseGroupVersion(e.APIVersion); err == nil {
				gvs = append(gvs, gv)
			}
		}
	}
	sch, err := s.Loader.Load(ctx, gvs)
	switch {
	case err != nil:
		// Not fatal: the caller falls back to another schema and says why.
		return nil, err.Error(), nil //nolint:nilerr // the error becomes the reason in the report
	case !sch.Has(applied.GroupVersionKind()):
		// The index may name an older document (a CRD just created
		// or changed): read the current one once.
		ok, err := s.Loader.Refresh(ctx, applied.GroupVersionKind().GroupVersion())
		if err == nil && ok {
			sch, err = s.Loader.Load(ctx, gvs)
		}
		switch {
		case err != nil:
			return nil, err.Error(), nil //nolint:nilerr // as above
		case !ok || !sch.Has(applied.GroupVersionKind()):
			return nil, "the cluster does not publish one", nil
		}
	}
	return sch, "", nil
}

// ScaleSchema implements Source: the Scale type comes with the parent's
// group-version document.
func (s *ClusterSource) ScaleSchema(ctx context.Context, gvk schema.GroupVersionKind) (managedfields.TypeConverter, error) {
	return s.Loader.Load(ctx, []schema.GroupVersion{gvk.GroupVersion(), {Group: "autoscaling", Version: "v1"}})
}

// Served implements Source.
func (s *ClusterSource) Served() func(schema.GroupVersionKind) bool { return s.Cluster.ServedKind }

// DryRunApply implements DryRunner.
func (s *ClusterSource) DryRunApply(ctx context.Context, obj, body *unstructured.Unstructured, o metav1.ApplyOptions, subresource string) (*unstructured.Unstructured, error) {
	ri, _, err := s.Cluster.Resource(obj)
	if err != nil {
		return nil, err
	}
	var subs []string
	if subresource != "" {
		subs = []string{subresource}
	}
	return ri.Apply(ctx, obj.GetName(), body, o, subs...)
}

// OfflineSource reads live objects from saved files and types built-in
// kinds with the schema compiled into kubectl-ssa, custom resources with
// the CRDs given.
type OfflineSource struct {
	Lives []*unstructured.Unstructured
	CRDs  map[schema.GroupKind]*Schema
	// crdObjects are the CRDs as given, for their storage versions.
	crdObjects map[schema.GroupKind]*unstructured.Unstructured
}

// NewOfflineSource builds a source from saved live objects and
// CustomResourceDefinitions.
func NewOfflineSource(lives, crds []*unstructured.Unstructured) (*OfflineSource, error) {
	s := &OfflineSource{Lives: lives, CRDs: map[schema.GroupKind]*Schema{}, crdObjects: map[schema.GroupKind]*unstructured.Unstructured{}}
	for _, c := range crds {
		sch, err := CRDSchema(c)
		if err != nil {
			return nil, err
		}
		group, _, _ := unstructured.NestedString(c.Object, "spec", "group")
		kind, _, _ := unstructured.NestedString(c.Object, "spec", "names", "kind")
		s.CRDs[schema.GroupKind{Group: group, Kind: kind}] = sch
		s.crdObjects[schema.GroupKind{Group: group, Kind: kind}] = c
	}
	return s, nil
}

// Target implements Source: the saved object of the same kind, name and
// (when the manifest has one) namespace.
func (s *OfflineSource) Target(_ context.Context, obj *unstructured.Unstructured) (*Target, error) {
	gvk := obj.GroupVersionKind()
	t := &Target{}
	if crd := s.crdObjects[gvk.GroupKind()]; crd != nil {
		t.Storage = StorageSchema(crd, gvk)
	}
	for _, l := range s.Lives {
		if l.GroupVersionKind().GroupKind() == gvk.GroupKind() && l.GetName() == obj.GetName() &&
			(obj.GetNamespace() == "" || l.GetNamespace() == obj.GetNamespace()) {
			t.Live = l.DeepCopy()
			if obj.GetNamespace() == "" {
				obj.SetNamespace(t.Live.GetNamespace())
			}
			break
		}
	}
	if t.Live == nil {
		t.Notes = append(t.Notes, "not in --live-file: simulated as a create")
		return t, nil
	}
	if t.Live.GroupVersionKind() != gvk {
		return nil, fmt.Errorf("%s: the live file has it at %s, the manifest at %s: save the live object at the manifest's apiVersion", kube.ObjectName(obj), t.Live.GetAPIVersion(), obj.GetAPIVersion())
	}
	_, t.HasStatus, _ = unstructured.NestedFieldNoCopy(t.Live.Object, "status")
	if len(t.Live.GetManagedFields()) == 0 {
		t.Notes = append(t.Notes, "the live file has no managedFields (saved without --show-managed-fields?): the prediction treats the object as never applied, so before-first-apply owns everything; save it with kubectl get -o yaml --show-managed-fields")
	}
	return t, nil
}

// Schema implements Source.
func (s *OfflineSource) Schema(_ context.Context, applied, _ *unstructured.Unstructured) (managedfields.TypeConverter, string, error) {
	gvk := applied.GroupVersionKind()
	if IsBuiltin(gvk) {
		return BuiltinSchema(), "", nil
	}
	if sch := s.CRDs[gvk.GroupKind()]; sch != nil {
		return sch, "typed by the CRD from --schema; its metadata is typed by deduction (finalizers and ownerReferences compare as atomic lists)", nil
	}
	return nil, "give the CRD with --schema", nil
}

// ScaleSchema implements Source.
func (s *OfflineSource) ScaleSchema(context.Context, schema.GroupVersionKind) (managedfields.TypeConverter, error) {
	return BuiltinSchema(), nil
}

// Served implements Source: offline, every version counts as served.
func (s *OfflineSource) Served() func(schema.GroupVersionKind) bool { return nil }
