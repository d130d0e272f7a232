package kube

import (
	"context"
	"fmt"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
)

// Options tune the clients of a Cluster.
type Options struct {
	// QuietWarnings drops the apiserver's deprecation warnings (a walk
	// over every kind would print one per deprecated kind).
	QuietWarnings bool
	// CommandFlags are the connection flags the user gave (--context,
	// --as, ...), as words: the commands errors suggest carry them.
	CommandFlags []string
}

// Cluster bundles the clients a command uses, created once per run. Its
// methods are safe for concurrent use.
type Cluster struct {
	Getter    genericclioptions.RESTClientGetter
	Config    *rest.Config
	Mapper    meta.RESTMapper
	Discovery discovery.CachedDiscoveryInterface
	Dynamic   dynamic.Interface
	Metadata  metadata.Interface
	// Namespace is the namespace of the context or -n; Enforce is set
	// when -n was given (a manifest's other namespace is then an error).
	Namespace string
	Enforce   bool
	// CommandFlags: see Options.
	CommandFlags []string

	mu     sync.Mutex
	served map[schema.GroupVersion]bool
	gvs    map[schema.GroupVersion]*gvResources
}

// gvResources is what the server serves in one group-version.
type gvResources struct {
	// kinds holds the resources of each kind, subresources left out.
	kinds map[string][]metav1.APIResource
	subs  map[string]bool
}

// New makes the clients from kubectl's flags.
func New(getter genericclioptions.RESTClientGetter, o Options) (*Cluster, error) {
	c := &Cluster{Getter: getter, CommandFlags: o.CommandFlags}
	var err error
	if c.Namespace, c.Enforce, err = getter.ToRawKubeConfigLoader().Namespace(); err != nil {
		return nil, err
	}
	if c.Mapper, err = getter.ToRESTMapper(); err != nil {
		return nil, err
	}
	if c.Discovery, err = getter.ToDiscoveryClient(); err != nil {
		return nil, err
	}
	if c.Config, err = RESTConfig(getter, o); err != nil {
		return nil, err
	}
	if c.Dynamic, err = dynamic.NewForConfig(c.Config); err != nil {
		return nil, err
	}
	if c.Metadata, err = metadata.NewForConfig(c.Config); err != nil {
		return nil, err
	}
	return c, nil
}

// RESTConfig is the client configuration with a client-side rate limit
// fit for bulk work: client-go's default (5 requests per second) would
// stretch the time between reading an object and writing it, and with it
// the chance of a conflict with other writers.
func RESTConfig(getter genericclioptions.RESTClientGetter, o Options) (*rest.Config, error) {
	cfg, err := getter.ToRESTConfig()
	if err != nil {
		return nil, err
	}
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = 200, 400
	if o.QuietWarnings {
		cfg.WarningHandler = rest.NoWarnings{}
	}
	return cfg, nil
}

// CheckNamespace refuses a namespace that does not exist: listing in it
// finds nothing, and a gate that found nothing must not pass. A user who
// may not read namespaces is not stopped here.
func (c *Cluster) CheckNamespace(ctx context.Context, ns string) error {
	if ns == "" {
		return nil
	}
	_, err := c.Metadata.Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}).Get(ctx, ns, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("namespace %q not found: check -n (kubectl get namespaces lists them)", ns)
	}
	return nil
}

// Mapping finds the resource of a kind, refreshing discovery once when
// the kind is new (a CRD created a moment ago).
func (c *Cluster) Mapping(gvk schema.GroupVersionKind) (*meta.RESTMapping, error) {
	if m := c.directMapping(gvk); m != nil {
		return m, nil
	}
	m, err := c.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil && meta.IsNoMatchError(err) {
		c.Refresh()
		m, err = c.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	if err != nil {
		if meta.IsNoMatchError(err) {
			return nil, &NotServedError{GVK: gvk}
		}
		return nil, err
	}
	return m, nil
}

// directMapping maps a kind at a version from that group-version's
// resource list alone, as the discovery mapper maps it, when exactly one
// resource serves the kind there: one cached document read instead of
// every group-version's, which the discovery mapper reads on its first
// use. Nil sends the caller to the discovery mapper.
func (c *Cluster) directMapping(gvk schema.GroupVersionKind) *meta.RESTMapping {
	if gvk.Version == "" || gvk.Kind == "" || c.Discovery == nil {
		return nil
	}
	gv := gvk.GroupVersion()
	rs := c.resources(gv).kinds[gvk.Kind]
	if len(rs) != 1 {
		return nil
	}
	scope := meta.RESTScopeNamespace
	if !rs[0].Namespaced {
		scope = meta.RESTScopeRoot
	}
	return &meta.RESTMapping{Resource: gv.WithResource(rs[0].Name), GroupVersionKind: gvk, Scope: scope}
}

// NotServedError: the server serves no such kind (at that version).
type NotServedError struct{ GVK schema.GroupVersionKind }

func (e *NotServedError) Error() string {
	return fmt.Sprintf("the server doesn't serve kind %s in %s: check apiVersion and kind, or list the known types with kubectl api-resources", e.GVK.Kind, e.GVK.GroupVersion())
}

// Refresh forgets what discovery said: which kinds are served decides
// what is stale, so bulk writers read it fresh.
func (c *Cluster) Refresh() {
	c.Discovery.Invalidate()
	if r, ok := c.Mapper.(meta.ResettableRESTMapper); ok {
		r.Reset()
	}
	c.mu.Lock()
	c.served, c.gvs = nil, nil
	c.mu.Unlock()
}

// Resource returns the dynamic client for an object, defaulting its
// namespace as kubectl does (and refusing a manifest namespace other than
// an explicit -n).
func (c *Cluster) Resource(obj *unstructured.Unstructured) (dynamic.ResourceInterface, *meta.RESTMapping, error) {
	m, err := c.Mapping(obj.GroupVersionKind())
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", ObjectName(obj), err)
	}
	ri, err := c.resourceFor(obj, m)
	if err != nil {
		return nil, nil, err
	}
	return ri, m, nil
}

// Resolved defaults obj's namespace as Resource does, from discovery as
// it is cached, without reading it again: nil when that does not map the
// kind (Resource then reads discovery again once) or refuses the
// namespace (Resource says why).
func (c *Cluster) Resolved(obj *unstructured.Unstructured) *meta.RESTMapping {
	m := c.directMapping(obj.GroupVersionKind())
	if m == nil {
		return nil
	}
	if err := c.defaultNamespace(obj, m); err != nil {
		return nil
	}
	return m
}

// resourceFor is the dynamic client of obj's resource m, obj's namespace
// defaulted.
func (c *Cluster) resourceFor(obj *unstructured.Unstructured, m *meta.RESTMapping) (dynamic.ResourceInterface, error) {
	if err := c.defaultNamespace(obj, m); err != nil {
		return nil, err
	}
	if m.Scope.Name() != meta.RESTScopeNameNamespace {
		return c.Dynamic.Resource(m.Resource), nil
	}
	return c.Dynamic.Resource(m.Resource).Namespace(obj.GetNamespace()), nil
}

// defaultNamespace puts obj's namespace as kubectl does: none for a
// cluster-scoped kind, the context's when the manifest has none, and an
// error for one other than an explicit -n.
func (c *Cluster) defaultNamespace(obj *unstructured.Unstructured, m *meta.RESTMapping) error {
	switch {
	case m.Scope.Name() != meta.RESTScopeNameNamespace:
		obj.SetNamespace("")
	case obj.GetNamespace() == "":
		obj.SetNamespace(c.Namespace)
	case c.Enforce && obj.GetNamespace() != c.Namespace:
		return fmt.Errorf("%s: the namespace from the manifest (%s) does not match --namespace %s", ObjectName(obj), obj.GetNamespace(), c.Namespace)
	}
	return nil
}

// Live reads the object a manifest names, with its managedFields; nil when
// it does not exist. obj's namespace is defaulted.
func (c *Cluster) Live(ctx context.Context, obj *unstructured.Unstructured) (*unstructured.Unstructured, *meta.RESTMapping, error) {
	ri, m, err := c.Resource(obj)
	if err != nil {
		return nil, nil, err
	}
	u, err := ri.Get(ctx, obj.GetName(), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, m, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("reading %s: %w", ObjectName(obj), c.Friendly(err))
	}
	return u, m, nil
}

// ServedKind tells whether the server serves a kind at a version: a
// group-version can be served for some kinds and not others (a CRD
// version switched off beside other CRDs of the group).
func (c *Cluster) ServedKind(gvk schema.GroupVersionKind) bool {
	return len(c.resources(gvk.GroupVersion()).kinds[gvk.Kind]) > 0
}

// HasSubresource tells whether a resource has a subresource (status,
// scale).
func (c *Cluster) HasSubresource(m *meta.RESTMapping, sub string) bool {
	return c.resources(m.Resource.GroupVersion()).subs[m.Resource.Resource+"/"+sub]
}

// resources reads, once per group-version, the kinds and subresources the
// server serves there.
func (c *Cluster) resources(gv schema.GroupVersion) *gvResources {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gvs == nil {
		c.gvs = map[schema.GroupVersion]*gvResources{}
	}
	if r, ok := c.gvs[gv]; ok {
		return r
	}
	r := &gvResources{kinds: map[string][]metav1.APIResource{}, subs: map[string]bool{}}
	if served, err := c.servedVersions(); err == nil && served[gv] {
		if list, err := c.Discovery.ServerResourcesForGroupVersion(gv.String()); err == nil {
			for _, res := range list.APIResources {
				if strings.Contains(res.Name, "/") {
					r.subs[res.Name] = true
				} else {
					r.kinds[res.Kind] = append(r.kinds[res.Kind], res)
				}
			}
		}
	}
	c.gvs[gv] = r
	return r
}

// CheckServer reads which group-versions the server serves: the first
// request of a command, whose failure (no server, bad credentials) stops
// it with one line.
func (c *Cluster) CheckServer() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, err := c.servedVersions()
	return err
}

func (c *Cluster) servedVersions() (map[schema.GroupVersion]bool, error) {
	if c.served != nil {
		return c.served, nil
	}
	groups, err := c.Discovery.ServerGroups()
	if err != nil {
		return nil, fmt.Errorf("reading the server's API groups: %w", c.Friendly(err))
	}
	c.served = map[schema.GroupVersion]bool{}
	for _, g := range groups.Groups {
		for _, v := range g.Versions {
			c.served[schema.GroupVersion{Group: g.Name, Version: v.Version}] = true
		}
	}
	return c.served, nil
}

// ObjectName names an object as Kind/namespace/name (Kind/name when
// cluster-scoped), as ownership.ObjectName does.
func ObjectName(obj *unstructured.Unstructured) string {
	if obj.GetNamespace() == "" {
		return obj.GetKind() + "/" + obj.GetName()
	}
	return obj.GetKind() + "/" + obj.GetNamespace() + "/" + obj.GetName()
}

// HasVerb tells whether a resource supports a verb.
func HasVerb(r metav1.APIResource, verb string) bool {
	for _, v := range r.Verbs {
		if v == verb {
			return true
		}
	}
	return false
}
