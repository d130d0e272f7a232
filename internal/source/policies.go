package source

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-ssa/kubectl-ssa/internal/kube"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/admission"
)

// userState is who the credentials are, asked once a run.
type userState struct {
	once sync.Once
	info *admission.UserInfo
}

// policies evaluates the policies of one object's apply (Admission sets
// it on the object's Config).
type policies struct {
	s   *Cluster
	ctx context.Context
}

// waiting is a companion started ahead (prestart) that waits for its
// request: one a run, whichever object's evaluation comes first takes it.
type waiting struct {
	mu sync.Mutex
	c  *companion
}

// prestart starts the companion before its request is known; a run that
// never sends one closes its standard input, and it exits.
func (p *policies) prestart() {
	if p.s.clock.halted() != nil {
		return
	}
	w := &p.s.waiting
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.c == nil {
		w.c, _ = startCompanion(p.ctx)
	}
}

var _ admission.PolicyEvaluator = (*policies)(nil)

// EvaluatePolicies completes req with what the policies read (the
// namespace, the user, the params) and runs the companion on it.
func (p *policies) EvaluatePolicies(req *admission.PolicyRequest) (*admission.PolicyResult, error) {
	ctx := p.ctx
	if req.Namespaced {
		if ns := req.Object.GetNamespace(); ns != "" {
			req.Namespace, req.NamespaceUnknown = p.s.namespaceObject(ctx, ns)
		}
	}
	req.UserInfo = p.s.user(ctx)
	if req.ServerMinor == 0 {
		// The CEL environment is the server's minor's.
		req.ServerMinor = p.s.serverMinor()
	}
	req.Params = p.s.params(ctx, req)
	in, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	out, path, err := p.s.evaluate(ctx, in)
	if err != nil {
		return nil, err
	}
	var res admission.PolicyResult
	if err := json.Unmarshal(out, &res); err != nil {
		return nil, fmt.Errorf("reading %s's answer: %w", path, err)
	}
	if res.Kind != admission.PolicyResultKind || res.APIVersion != admission.PolicyAPIVersion {
		return nil, fmt.Errorf("%s answered a %s %s: it comes from another build than kubectl-ssa", path, res.APIVersion, res.Kind)
	}
	return &res, nil
}

// namespaceObject is namespace ns as policies see it (namespaceObject);
// a Namespace the input applies earlier has the labels of that apply.
func (s *Cluster) namespaceObject(ctx context.Context, ns string) (*unstructured.Unstructured, bool) {
	live, err := s.namespace(ctx, ns)
	labels := s.inputNamespaces[ns]
	switch {
	case err == nil && labels == nil:
		return live, false
	case labels != nil:
		obj := &unstructured.Unstructured{Object: map[string]any{}}
		if err == nil {
			obj = live.DeepCopy()
		}
		obj.SetAPIVersion("v1")
		obj.SetKind("Namespace")
		obj.SetName(ns)
		obj.SetLabels(labels)
		return obj, false
	}
	return nil, true
}

// user is who the credentials are (a SelfSubjectReview, which every
// authenticated user may create); nil when the server does not say.
func (s *Cluster) user(ctx context.Context) *admission.UserInfo {
	s.who.once.Do(func() {
		gvr := schema.GroupVersionResource{Group: "authentication.k8s.io", Version: "v1", Resource: "selfsubjectreviews"}
		review := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}}
		got, err := s.Cluster.Dynamic.Resource(gvr).Create(ctx, review, metav1.CreateOptions{})
		if err != nil {
			return
		}
		ui, found, _ := unstructured.NestedMap(got.Object, "status", "userInfo")
		if !found {
			return
		}
		b, _ := json.Marshal(ui)
		var info admission.UserInfo
		if json.Unmarshal(b, &info) == nil && info.Username != "" {
			s.who.info = &info
		}
	})
	return s.who.info
}

// params reads the objects the bindings of req's policies refer to, per
// paramKind: by name, or by selector.
func (s *Cluster) params(ctx context.Context, req *admission.PolicyRequest) []admission.ParamSet {
	kinds := map[string]schema.GroupVersionKind{}
	for _, p := range append(append([]*unstructured.Unstructured{}, req.ValidatingPolicies...), req.MutatingPolicies...) {
		apiVersion, _, _ := unstructured.NestedString(p.Object, "spec", "paramKind", "apiVersion")
		kind, _, _ := unstructured.NestedString(p.Object, "spec", "paramKind", "kind")
		if kind == "" {
			continue
		}
		gv, err := schema.ParseGroupVersion(apiVersion)
		if err != nil {
			continue
		}
		kinds[p.GetName()] = gv.WithKind(kind)
	}
	sets := map[schema.GroupVersionKind]*admission.ParamSet{}
	for _, b := range append(append([]*unstructured.Unstructured{}, req.ValidatingBindings...), req.MutatingBindings...) {
		policy, _, _ := unstructured.NestedString(b.Object, "spec", "policyName")
		gvk, ok := kinds[policy]
		ref, hasRef, _ := unstructured.NestedMap(b.Object, "spec", "paramRef")
		if !ok || !hasRef {
			continue
		}
		set := sets[gvk]
		if set == nil {
			set = &admission.ParamSet{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Items: []*unstructured.Unstructured{}}
			sets[gvk] = set
		}
		m, err := s.Cluster.Mapping(gvk)
		if err != nil {
			// Not served: the server fails the binding as it is configured.
			continue
		}
		set.Resource, set.Namespaced = m.Resource.Resource, m.Scope.Name() == meta.RESTScopeNameNamespace
		ns := ""
		if set.Namespaced {
			ns, _ = ref["namespace"].(string)
			if ns == "" {
				ns = req.Object.GetNamespace()
			}
		}
		items, err := s.readParams(ctx, m.Resource, ns, ref)
		switch {
		case apierrors.IsForbidden(err):
			set.Unreadable = fmt.Sprintf("forbidden: check with %s", kube.CanI("get", m.Resource.GroupResource(), ns, s.Cluster.CommandFlags))
		case err != nil:
			set.Unreadable = s.Cluster.Friendly(err).Error()
		}
		set.Items = appendNew(set.Items, items)
	}
	out := make([]admission.ParamSet, 0, len(sets))
	for _, set := range sets {
		out = append(out, *set)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].APIVersion+"/"+out[i].Kind < out[j].APIVersion+"/"+out[j].Kind })
	return out
}

// paramReads are the params read in this run, by what was asked: an
// object's evaluations (its forced apply, a second validation, --verify's
// re-predictions) read each once.
type paramReads struct {
	mu   sync.Mutex
	read map[string]paramRead
}

type paramRead struct {
	items []*unstructured.Unstructured
	err   error
}

// readParams reads what one paramRef names, once a run.
func (s *Cluster) readParams(ctx context.Context, gvr schema.GroupVersionResource, ns string, ref map[string]any) ([]*unstructured.Unstructured, error) {
	b, _ := json.Marshal(ref)
	key := gvr.String() + "\x00" + ns + "\x00" + string(b)
	s.paramReads.mu.Lock()
	defer s.paramReads.mu.Unlock()
	if r, ok := s.paramReads.read[key]; ok {
		return r.items, r.err
	}
	items, err := s.readParamsOnce(ctx, gvr, ns, ref)
	if s.paramReads.read == nil {
		s.paramReads.read = map[string]paramRead{}
	}
	s.paramReads.read[key] = paramRead{items, err}
	return items, err
}

// readParamsOnce reads what one paramRef names (none when it is not
// found: the binding's parameterNotFoundAction then decides).
func (s *Cluster) readParamsOnce(ctx context.Context, gvr schema.GroupVersionResource, ns string, ref map[string]any) ([]*unstructured.Unstructured, error) {
	r := s.Cluster.Dynamic.Resource(gvr).Namespace(ns)
	if name, _ := ref["name"].(string); name != "" {
		obj, err := r.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		return []*unstructured.Unstructured{obj}, nil
	}
	var sel metav1.LabelSelector
	if raw, ok := ref["selector"]; ok {
		b, _ := json.Marshal(raw)
		if err := json.Unmarshal(b, &sel); err != nil {
			return nil, err
		}
	}
	selector, err := metav1.LabelSelectorAsSelector(&sel)
	if err != nil {
		return nil, err
	}
	l, err := r.List(ctx, metav1.ListOptions{LabelSelector: selector.String()})
	if err != nil {
		return nil, err
	}
	out := make([]*unstructured.Unstructured, len(l.Items))
	for i := range l.Items {
		out[i] = &l.Items[i]
	}
	return out, nil
}

// appendNew appends the objects not in list yet.
func appendNew(list, more []*unstructured.Unstructured) []*unstructured.Unstructured {
	for _, u := range more {
		dup := false
		for _, have := range list {
			dup = dup || have.GetNamespace() == u.GetNamespace() && have.GetName() == u.GetName()
		}
		if !dup {
			list = append(list, u)
		}
	}
	return list
}
