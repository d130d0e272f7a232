package cmd

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
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/conflict"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
)

// cluster bundles the clients commands share, created once per run.
type cluster struct {
	g         *globalOptions
	mapper    meta.RESTMapper
	discovery discovery.CachedDiscoveryInterface
	dynamic   dynamic.Interface
	namespace string
	enforceNS bool
	loader    *conflict.Loader
	served    map[schema.GroupVersion]bool
	kinds     map[schema.GroupVersion]map[string]bool
	mu        sync.Mutex
}

func newCluster(g *globalOptions) (*cluster, error) {
	c := &cluster{g: g}
	var err error
	if c.namespace, c.enforceNS, err = g.configFlags.ToRawKubeConfigLoader().Namespace(); err != nil {
		return nil, err
	}
	if c.mapper, err = g.configFlags.ToRESTMapper(); err != nil {
		return nil, err
	}
	if c.discovery, err = g.configFlags.ToDiscoveryClient(); err != nil {
		return nil, err
	}
	cfg, err := g.restConfig()
	if err != nil {
		return nil, err
	}
	if c.dynamic, err = dynamic.NewForConfig(cfg); err != nil {
		return nil, err
	}
	cacheBase := ""
	if g.configFlags.CacheDir != nil {
		cacheBase = *g.configFlags.CacheDir
	}
	c.loader = &conflict.Loader{Client: c.discovery.OpenAPIV3(), CacheDir: conflict.CacheDirFor(cacheBase, cfg.Host)}
	return c, nil
}

// restConfig is the client configuration with a client-side rate limit
// fit for bulk work: client-go's default (5 requests per second) would
// stretch the time between reading an object and writing it, and with it
// the chance of a conflict with other writers.
func (g *globalOptions) restConfig() (*rest.Config, error) {
	cfg, err := g.configFlags.ToRESTConfig()
	if err != nil {
		return nil, err
	}
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = 200, 400
	if g.quietWarnings {
		cfg.WarningHandler = rest.NoWarnings{}
	}
	return cfg, nil
}

// mapping finds the resource of a kind, refreshing discovery once when
// the kind is new (a CRD created a moment ago).
func (c *cluster) mapping(gvk schema.GroupVersionKind) (*meta.RESTMapping, error) {
	m, err := c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil && meta.IsNoMatchError(err) {
		c.discovery.Invalidate()
		if r, ok := c.mapper.(meta.ResettableRESTMapper); ok {
			r.Reset()
		}
		m, err = c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	if err != nil {
		if meta.IsNoMatchError(err) {
			return nil, fmt.Errorf("the server doesn't serve kind %s in %s: check apiVersion and kind, or list the known types with kubectl api-resources", gvk.Kind, gvk.GroupVersion())
		}
		return nil, err
	}
	return m, nil
}

// resource returns the dynamic client for an object, defaulting its
// namespace as kubectl does.
func (c *cluster) resource(obj *unstructured.Unstructured) (dynamic.ResourceInterface, *meta.RESTMapping, error) {
	m, err := c.mapping(obj.GroupVersionKind())
	if err != nil {
		return nil, nil, err
	}
	if m.Scope.Name() != meta.RESTScopeNameNamespace {
		obj.SetNamespace("")
		return c.dynamic.Resource(m.Resource), m, nil
	}
	if obj.GetNamespace() == "" {
		obj.SetNamespace(c.namespace)
	} else if c.enforceNS && obj.GetNamespace() != c.namespace {
		return nil, nil, fmt.Errorf("%s: the namespace from the manifest (%s) does not match --namespace %s", objName(obj), obj.GetNamespace(), c.namespace)
	}
	return c.dynamic.Resource(m.Resource).Namespace(obj.GetNamespace()), m, nil
}

// live reads an object with its managedFields; nil when it does not exist.
func (c *cluster) live(ctx context.Context, obj *unstructured.Unstructured) (*unstructured.Unstructured, *meta.RESTMapping, error) {
	ri, m, err := c.resource(obj)
	if err != nil {
		return nil, nil, err
	}
	u, err := ri.Get(ctx, obj.GetName(), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, m, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("reading %s: %w", objName(obj), friendly(err))
	}
	return u, m, nil
}

// servedKind tells whether the server serves a kind at a version: a
// group-version can be served for some kinds and not others (a CRD
// version switched off beside other CRDs of the group).
func (c *cluster) servedKind(gvk schema.GroupVersionKind) bool {
	if c.kinds == nil {
		c.kinds = map[schema.GroupVersion]map[string]bool{}
	}
	kinds, ok := c.kinds[gvk.GroupVersion()]
	if !ok {
		kinds = map[string]bool{}
		if served, err := c.servedVersions(); err == nil && served[gvk.GroupVersion()] {
			if list, err := c.discovery.ServerResourcesForGroupVersion(gvk.GroupVersion().String()); err == nil {
				for _, r := range list.APIResources {
					if !strings.Contains(r.Name, "/") {
						kinds[r.Kind] = true
					}
				}
			}
		}
		c.kinds[gvk.GroupVersion()] = kinds
	}
	return kinds[gvk.Kind]
}

// lockedServedKind is servedKind for concurrent callers.
func (c *cluster) lockedServedKind(gvk schema.GroupVersionKind) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.servedKind(gvk)
}

// servedVersions reads which group-versions the server serves.
func (c *cluster) servedVersions() (map[schema.GroupVersion]bool, error) {
	if c.served != nil {
		return c.served, nil
	}
	groups, err := c.discovery.ServerGroups()
	if err != nil {
		return nil, fmt.Errorf("reading the server's API groups: %w", err)
	}
	c.served = map[schema.GroupVersion]bool{}
	for _, g := range groups.Groups {
		for _, v := range g.Versions {
			c.served[schema.GroupVersion{Group: g.Name, Version: v.Version}] = true
		}
	}
	return c.served, nil
}

// hasSubresource tells whether a resource has a subresource (status).
func (c *cluster) hasSubresource(m *meta.RESTMapping, sub string) bool {
	list, err := c.discovery.ServerResourcesForGroupVersion(m.Resource.GroupVersion().String())
	if err != nil {
		return false
	}
	for _, r := range list.APIResources {
		if r.Name == m.Resource.Resource+"/"+sub {
			return true
		}
	}
	return false
}

// isCustom tells whether a kind is served by a CustomResourceDefinition
// (or an aggregated API): its group is not one of the built-in groups.
func isCustom(gvk schema.GroupVersionKind) bool {
	return !scheme.Scheme.IsGroupRegistered(gvk.Group)
}

// schemaFor loads the schema of an object's kind at the applied version
// and at every version its managedFields mention.
func (c *cluster) schemaFor(ctx context.Context, applied, live *unstructured.Unstructured) (*conflict.Schema, error) {
	gvs := []schema.GroupVersion{applied.GroupVersionKind().GroupVersion()}
	if live != nil {
		for _, e := range live.GetManagedFields() {
			if gv, err := schema.ParseGroupVersion(e.APIVersion); err == nil {
				gvs = append(gvs, gv)
			}
		}
	}
	return c.loader.Load(ctx, gvs)
}

func objName(obj *unstructured.Unstructured) string {
	return ownership.ObjectName(obj.GetKind(), obj.GetNamespace(), obj.GetName())
}

func lower(s string) string { return strings.ToLower(s) }
