// Package celeval evaluates admission policies for one request with the
// apiserver's own admission code (k8s.io/apiserver's validating and
// mutating policy dispatchers, their CEL compiler and matcher). It is
// linked only into the companion executable ssa-admission-eval: the
// apiserver's CEL stack costs every command that links it about 6 ms
// and 8 MiB at start.
//
// It reads no cluster: everything it needs is in the request.
package celeval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/plugin/policy/matching"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/cel/environment"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	listersv1 "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	ssaadmission "github.com/kubectl-ssa/kubectl-ssa/pkg/admission"
)

// Evaluate runs req's mutating policies, then its validating ones, as
// the apiserver's admission chain runs them.
func Evaluate(ctx context.Context, req *ssaadmission.PolicyRequest) (*ssaadmission.PolicyResult, error) {
	if err := checkRequest(req); err != nil {
		return nil, err
	}
	e, err := newEvaluation(req)
	if err != nil {
		return nil, err
	}
	res := &ssaadmission.PolicyResult{Kind: ssaadmission.PolicyResultKind, APIVersion: ssaadmission.PolicyAPIVersion, Warnings: []string{}, Bindings: []ssaadmission.BindingResult{}}
	obj := req.Object.DeepCopy()
	if len(req.MutatingPolicies) > 0 {
		mutated, err := e.mutate(ctx, obj, res)
		if err != nil {
			return nil, err
		}
		if mutated != nil {
			res.Object, obj = mutated, mutated
		}
	}
	if res.Denied == "" && len(req.ValidatingPolicies) > 0 {
		if err := e.validate(ctx, obj, res); err != nil {
			return nil, err
		}
	}
	if len(req.Webhooks) > 0 {
		if err := e.webhooks(ctx, obj, res); err != nil {
			return nil, err
		}
	}
	sort.Strings(res.NotEvaluable)
	return res, nil
}

// evaluation is what both phases share: the matcher over the request's
// namespace, the params, the user.
type evaluation struct {
	req     *ssaadmission.PolicyRequest
	gvk     schema.GroupVersionKind
	gvr     schema.GroupVersionResource
	matcher *matching.Matcher
	params  map[schema.GroupVersionKind]*paramSet
	user    user.Info
	env     *environment.EnvSet
	objects admission.ObjectInterfaces
}

func newEvaluation(req *ssaadmission.PolicyRequest) (*evaluation, error) {
	e := &evaluation{
		req: req,
		gvk: req.Object.GroupVersionKind(),
		gvr: schema.GroupVersionResource{Group: req.Resource.Group, Version: req.Resource.Version, Resource: req.Resource.Resource},
		// No conversion is asked of it: the policies see the object at
		// the version it is applied at (a policy that matches another
		// version through matchPolicy Equivalent is said not evaluable).
		objects: admission.NewObjectInterfacesFromScheme(runtime.NewScheme()),
		params:  map[schema.GroupVersionKind]*paramSet{},
	}
	namespaces := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	if req.Namespace != nil {
		var ns corev1.Namespace
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(req.Namespace.Object, &ns); err != nil {
			return nil, fmt.Errorf("decoding namespace %s: %w", req.Namespace.GetName(), err)
		}
		_ = namespaces.Add(&ns)
	}
	// The namespace lister is all the matcher reads: a namespace not in
	// it is not found (the client it then asks says so).
	e.matcher = matching.NewMatcher(listersv1.NewNamespaceLister(namespaces), noNamespaces{})
	for _, ps := range req.Params {
		gv, err := schema.ParseGroupVersion(ps.APIVersion)
		if err != nil {
			return nil, fmt.Errorf("param kind %s: %w", ps.APIVersion, err)
		}
		set := &paramSet{unreadable: ps.Unreadable, namespaced: ps.Namespaced, indexer: cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})}
		for _, item := range ps.Items {
			// As an informer holds it.
			_ = set.indexer.Add(item)
		}
		e.params[gv.WithKind(ps.Kind)] = set
	}
	if u := req.UserInfo; u != nil {
		e.user = &user.DefaultInfo{Name: u.Username, UID: u.UID, Groups: u.Groups, Extra: u.Extra}
	} else {
		e.user = &user.DefaultInfo{}
	}
	return e, nil
}

// noNamespaces is the client the namespace matcher asks for a namespace
// its lister lacks (a cache miss, to the apiserver): the request holds
// the only namespace known here, so any other is not found.
type noNamespaces struct{ kubernetes.Interface }

func (noNamespaces) CoreV1() corev1client.CoreV1Interface { return noCore{} }

type noCore struct{ corev1client.CoreV1Interface }

func (noCore) Namespaces() corev1client.NamespaceInterface { return noNamespace{} }

type noNamespace struct {
	corev1client.NamespaceInterface
}

func (noNamespace) Get(_ context.Context, name string, _ metav1.GetOptions) (*corev1.Namespace, error) {
	return nil, apierrors.NewNotFound(corev1.Resource("namespaces"), name)
}

// attributes are the request's admission attributes for obj.
func (e *evaluation) attributes(obj *unstructured.Unstructured) *recorded {
	var old runtime.Object
	op := admission.Create
	var options runtime.Object = &metav1.CreateOptions{FieldManager: e.req.FieldManager, DryRun: []string{metav1.DryRunAll}}
	if e.req.OldObject != nil {
		old, op = e.req.OldObject, admission.Update
		options = &metav1.UpdateOptions{FieldManager: e.req.FieldManager, DryRun: []string{metav1.DryRunAll}}
	}
	if obj != nil {
		// Policies see the apply as the apiserver's patch handler sends it.
		obj.SetGroupVersionKind(e.gvk)
	}
	ns := ""
	if e.req.Namespaced {
		ns = obj.GetNamespace()
	}
	a := admission.NewAttributesRecord(obj, old, e.gvk, ns, obj.GetName(), e.gvr, e.req.Subresource, op, options, true, e.user)
	return &recorded{Attributes: a, annotations: map[string]string{}}
}

// recorded keeps the audit annotations the dispatchers add.
type recorded struct {
	admission.Attributes
	mu          sync.Mutex
	annotations map[string]string
}

func (r *recorded) AddAnnotation(key, value string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.annotations[key] = value
	return nil
}

// warnings collects what the dispatchers return as warnings.
type warnings struct {
	mu   sync.Mutex
	list []string
}

func (w *warnings) AddWarning(_, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, have := range w.list {
		if have == text {
			return
		}
	}
	w.list = append(w.list, text)
}

// unknowable is the authorizer: what it would answer is the server's
// to know. A call marks the evaluation not known.
type unknowable struct {
	mu     sync.Mutex
	called bool
}

func (u *unknowable) Authorize(context.Context, authorizer.Attributes) (authorizer.Decision, string, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.called = true
	return authorizer.DecisionNoOpinion, "", errors.New("the authorizer is not evaluated locally")
}

func (u *unknowable) wasCalled() bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.called
}

// paramSet is one paramKind's objects, as an informer would hold them.
type paramSet struct {
	indexer    cache.Indexer
	namespaced bool
	unreadable string
}

func (p *paramSet) Informer() cache.SharedIndexInformer { return synced{} }
func (p *paramSet) Lister() cache.GenericLister {
	return cache.NewGenericLister(p.indexer, schema.GroupResource{})
}

// synced is an informer that has synced: the params were listed.
type synced struct{ cache.SharedIndexInformer }

func (synced) HasSynced() bool { return true }

var _ informers.GenericInformer = &paramSet{}

func (p *paramSet) scope() meta.RESTScope {
	if p.namespaced {
		return meta.RESTScopeNamespace
	}
	return meta.RESTScopeRoot
}

// paramsOf returns the param source of a policy's paramKind, and why it
// can't be known.
func (e *evaluation) paramsOf(pk *admissionregistrationv1.ParamKind) (informers.GenericInformer, meta.RESTScope, string) {
	if pk == nil {
		return nil, nil, ""
	}
	gv, _ := schema.ParseGroupVersion(pk.APIVersion)
	set := e.params[gv.WithKind(pk.Kind)]
	if set == nil {
		// The server then fails the policy as a configuration error:
		// the caller lists every paramKind it can map, so this one is
		// not served.
		return nil, meta.RESTScopeRoot, ""
	}
	if set.unreadable != "" {
		return nil, nil, set.unreadable
	}
	return set, set.scope(), ""
}

// usesUser tells whether a policy's expressions read the user, which
// then must be known.
func usesUser(spec any) bool {
	b, _ := json.Marshal(spec)
	return strings.Contains(string(b), "userInfo")
}

func decodePolicy[T any](u *unstructured.Unstructured) (*T, error) {
	out := new(T)
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, out); err != nil {
		return nil, fmt.Errorf("decoding %s %s: %w", u.GetKind(), u.GetName(), err)
	}
	return out, nil
}

// bindingsOf pairs each policy with its bindings, by policy name, both in
// name order.
func bindingsOf(policies, bindings []*unstructured.Unstructured) ([]string, map[string][]*unstructured.Unstructured) {
	var names []string
	byPolicy := map[string][]*unstructured.Unstructured{}
	for _, p := range policies {
		names = append(names, p.GetName())
	}
	sort.Strings(names)
	for _, b := range bindings {
		name, _, _ := unstructured.NestedString(b.Object, "spec", "policyName")
		byPolicy[name] = append(byPolicy[name], b)
	}
	for _, list := range byPolicy {
		sort.Slice(list, func(i, j int) bool { return list[i].GetName() < list[j].GetName() })
	}
	return names, byPolicy
}

func byName(list []*unstructured.Unstructured) map[string]*unstructured.Unstructured {
	out := map[string]*unstructured.Unstructured{}
	for _, u := range list {
		out[u.GetName()] = u
	}
	return out
}

// statusOf is the message and code of a dispatcher's error.
func statusOf(err error) (string, int32) {
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		return status.Status().Message, status.Status().Code
	}
	return err.Error(), 500
}

// defaultMatch sets what the apiserver's defaulting sets on
// matchResources (SetDefaults_MatchResources): the policies read from a
// server have them, objects written by hand may not.
func defaultMatch(m *admissionregistrationv1.MatchResources) {
	if m == nil {
		return
	}
	if m.MatchPolicy == nil {
		equivalent := admissionregistrationv1.Equivalent
		m.MatchPolicy = &equivalent
	}
	if m.NamespaceSelector == nil {
		m.NamespaceSelector = &metav1.LabelSelector{}
	}
	if m.ObjectSelector == nil {
		m.ObjectSelector = &metav1.LabelSelector{}
	}
}

// defaultFailurePolicy sets a policy's failurePolicy default, Fail.
func defaultFailurePolicy(p **admissionregistrationv1.FailurePolicyType) {
	if *p == nil {
		fail := admissionregistrationv1.Fail
		*p = &fail
	}
}
