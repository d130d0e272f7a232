package source

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-ssa/kubectl-ssa/internal/kube"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/admission"
)

const admissionGroup = "admissionregistration.k8s.io"

// admissionState is the cluster's admission, listed once a run.
type admissionState struct {
	once    sync.Once
	config  admission.Config
	classes sync.Map // resource -> *classList
}

type classList struct {
	once  sync.Once
	items []*unstructured.Unstructured
	why   string
}

type nsLabels struct {
	labels  map[string]string
	unknown bool
}

// Admission reads the cluster's admission (Reader.Admission): the policies, bindings
// and webhook configurations (listed once, side by side), the default
// classes a PVC or an Ingress gets, and the labels of obj's namespace.
func (s *Cluster) Admission(ctx context.Context, obj *unstructured.Unstructured) (*admission.Config, admission.Request, error) {
	m, err := s.Cluster.Mapping(obj.GroupVersionKind())
	if err != nil {
		return nil, admission.Request{}, err
	}
	// PodSecurity reads the namespace's labels whatever the policies:
	// they are read beside the policies, not after them.
	var nsRead errgroup.Group
	var nsBeside *nsLabels
	if m.Scope.Name() == meta.RESTScopeNameNamespace && admission.PodSecurityChecks(m.Resource.GroupResource()) {
		nsBeside = &nsLabels{}
		ns := obj.GetNamespace()
		nsRead.Go(func() error { *nsBeside = s.namespaceLabels(ctx, ns); return nil })
	}
	cfg := s.admissionConfig(ctx) // a copy: the classes are the object's own
	switch m.Resource.GroupResource() {
	case schema.GroupResource{Resource: "persistentvolumeclaims"}:
		cfg.StorageClasses = s.classes(ctx, schema.GroupVersionResource{Group: "storage.k8s.io", Version: "v1", Resource: "storageclasses"}, &cfg)
	case schema.GroupResource{Group: "networking.k8s.io", Resource: "ingresses"}:
		cfg.IngressClasses = s.classes(ctx, schema.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "ingressclasses"}, &cfg)
	case pods:
		if creates, _ := s.podCreates.Load(kube.ObjectName(obj)); creates == true {
			cfg.Pod = s.podReads(ctx, obj)
		}
	}
	if len(cfg.ValidatingPolicies)+len(cfg.MutatingPolicies)+len(cfg.ValidatingWebhooks)+len(cfg.MutatingWebhooks) > 0 {
		// Called only when a policy, or a webhook with matchConditions,
		// matches.
		cfg.Policies = &policies{s: s, ctx: ctx}
	}
	req := admission.Request{Resource: m.Resource, Namespaced: m.Scope.Name() == meta.RESTScopeNameNamespace}
	matchers := len(cfg.ValidatingPolicies) + len(cfg.MutatingPolicies) + len(cfg.ValidatingWebhooks) + len(cfg.MutatingWebhooks)
	if req.Namespaced && (matchers > 0 || admission.PodSecurityChecks(m.Resource.GroupResource())) {
		// Only a namespaceSelector and PodSecurity need them.
		var ns nsLabels
		if nsBeside != nil {
			_ = nsRead.Wait()
			ns = *nsBeside
		} else {
			ns = s.namespaceLabels(ctx, obj.GetNamespace())
		}
		req.NamespaceLabels, req.NamespaceUnknown = ns.labels, ns.unknown
		for k := range ns.labels {
			if strings.HasPrefix(k, "pod-security.kubernetes.io/") {
				// PodSecurity's "latest" is the server's version.
				req.ServerMinor = s.serverMinor()
				break
			}
		}
	}
	if p, ok := cfg.Policies.(*policies); ok {
		probe := req
		probe.Object = obj
		if admission.Evaluates(&cfg, probe) {
			// Started now, it is ready when the prediction is: its
			// start-up (about 25 ms) overlaps the reads and the apply.
			p.prestart()
		}
	}
	return &cfg, req, nil
}

// admissionConfig is the cluster's admission configuration, listed once.
// (Started before the first object is read, it measured slower: it
// competes with the start-up's own work.)
func (s *Cluster) admissionConfig(ctx context.Context) admission.Config {
	s.admission.once.Do(func() { s.admission.config = s.listAdmission(ctx) })
	return s.admission.config
}

// listAdmission lists what matches requests, side by side.
func (s *Cluster) listAdmission(ctx context.Context) admission.Config {
	var c admission.Config
	// A policy acts through its bindings: they are listed only when
	// there are policies.
	type listing struct {
		resource string
		into     *[]*unstructured.Unstructured
		bindings *listing
	}
	lists := []listing{
		{"validatingadmissionpolicies", &c.ValidatingPolicies, &listing{resource: "validatingadmissionpolicybindings", into: &c.ValidatingBindings}},
		{"mutatingadmissionpolicies", &c.MutatingPolicies, &listing{resource: "mutatingadmissionpolicybindings", into: &c.MutatingBindings}},
		{"validatingwebhookconfigurations", &c.ValidatingWebhooks, nil},
		{"mutatingwebhookconfigurations", &c.MutatingWebhooks, nil},
	}
	var mu sync.Mutex
	var g errgroup.Group
	var forbidden []string
	for _, l := range lists {
		g.Go(func() error {
			for at := &l; at != nil; at = at.bindings {
				items, err := s.listServed(ctx, at.resource)
				mu.Lock()
				*at.into = items
				switch {
				case apierrors.IsForbidden(err):
					forbidden = append(forbidden, at.resource)
				case err != nil:
					c.Unreadable = append(c.Unreadable, fmt.Sprintf("could not list %s.%s (%v)", at.resource, admissionGroup, s.Cluster.Friendly(err)))
				}
				mu.Unlock()
				if len(items) == 0 && err == nil {
					break
				}
			}
			return nil
		})
	}
	_ = g.Wait() // (each list's error is said in c.Unreadable)
	if len(forbidden) > 0 {
		sort.Strings(forbidden)
		c.Unreadable = append(c.Unreadable, fmt.Sprintf("could not list %s of %s (forbidden: check with %s)",
			strings.Join(forbidden, ", "), admissionGroup, kube.CanI("list", schema.GroupResource{Group: admissionGroup, Resource: forbidden[0]}, "", s.Cluster.CommandFlags)))
	}
	sort.Strings(c.Unreadable)
	return c
}

// listServed lists an admission resource at the newest version served:
// v1, else (older servers, mutating policies) v1beta1 or v1alpha1. A
// resource served at none is an empty list. Discovery is not asked: the
// server's 404 says what is not served.
func (s *Cluster) listServed(ctx context.Context, resource string) ([]*unstructured.Unstructured, error) {
	for _, v := range []string{"v1", "v1beta1", "v1alpha1"} {
		items, err := s.list(ctx, schema.GroupVersionResource{Group: admissionGroup, Version: v, Resource: resource})
		if !apierrors.IsNotFound(err) {
			return items, err
		}
	}
	return nil, nil
}

// list lists gvr (a 404 when it is not served).
func (s *Cluster) list(ctx context.Context, gvr schema.GroupVersionResource) ([]*unstructured.Unstructured, error) {
	l, err := s.Cluster.Dynamic.Resource(gvr).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	out := make([]*unstructured.Unstructured, len(l.Items))
	for i := range l.Items {
		out[i] = &l.Items[i]
	}
	return out, nil
}

// classes lists a kind of classes once a run; what could not be listed
// goes to cfg.Unreadable.
func (s *Cluster) classes(ctx context.Context, gvr schema.GroupVersionResource, cfg *admission.Config) []*unstructured.Unstructured {
	v, _ := s.admission.classes.LoadOrStore(gvr.Resource, &classList{})
	cl := v.(*classList)
	cl.once.Do(func() {
		var err error
		if cl.items, err = s.list(ctx, gvr); err != nil && !apierrors.IsNotFound(err) {
			cl.why = fmt.Sprintf("could not list %s to know the default class (%v)", gvr.GroupResource(), err)
			if apierrors.IsForbidden(err) {
				cl.why = fmt.Sprintf("could not list %s to know the default class (forbidden: check with %s)", gvr.GroupResource(), kube.CanI("list", gvr.GroupResource(), "", s.Cluster.CommandFlags))
			}
		}
	})
	if cl.why != "" {
		cfg.Unreadable = append(append([]string{}, cfg.Unreadable...), cl.why)
	}
	return cl.items
}

// namespaceLabels are the labels of namespace ns; a Namespace the input
// applies earlier has those of that apply.
func (s *Cluster) namespaceLabels(ctx context.Context, ns string) nsLabels {
	if labels := s.inputNamespaces[ns]; labels != nil {
		return nsLabels{labels: labels}
	}
	live, err := s.namespace(ctx, ns)
	if err != nil {
		return nsLabels{unknown: true}
	}
	return nsLabels{labels: live.GetLabels()}
}
