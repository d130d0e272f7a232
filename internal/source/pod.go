package source

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-ssa/kubectl-ssa/internal/kube"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/admission"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/defaults"
)

var pods = schema.GroupResource{Resource: "pods"}

// What a Pod's create reads, by the admission plugin that reads it.
var (
	serviceAccountsGVR = schema.GroupVersionResource{Version: "v1", Resource: "serviceaccounts"}
	priorityClassesGVR = schema.GroupVersionResource{Group: "scheduling.k8s.io", Version: "v1", Resource: "priorityclasses"}
	runtimeClassesGVR  = schema.GroupVersionResource{Group: "node.k8s.io", Version: "v1", Resource: "runtimeclasses"}
	limitRangesGVR     = schema.GroupVersionResource{Version: "v1", Resource: "limitranges"}
)

// podInputKinds are the kinds of those reads, which an input may apply
// before the Pod.
var podInputKinds = map[schema.GroupKind]bool{
	{Kind: "ServiceAccount"}:                            true,
	{Group: "scheduling.k8s.io", Kind: "PriorityClass"}: true,
	{Group: "node.k8s.io", Kind: "RuntimeClass"}:        true,
	{Kind: "LimitRange"}:                                true,
}

// podRead is one read of a run (a get or a list), done once.
type podRead struct {
	once  sync.Once
	items []*unstructured.Unstructured // a list's; a get's one object, or none
	why   string                       // why it could not be read ("": it was)
}

// podNames are what a Pod's create looks up by name: its service account
// (default unless named) and its RuntimeClass ("" with named false).
func podNames(pod *unstructured.Unstructured) (serviceAccount, runtimeClass string, named bool) {
	spec, _ := pod.Object["spec"].(map[string]any)
	serviceAccount, _ = spec["serviceAccountName"].(string)
	if serviceAccount == "" {
		serviceAccount, _ = spec["serviceAccount"].(string)
	}
	if serviceAccount == "" {
		serviceAccount = "default"
	}
	runtimeClass, named = spec["runtimeClassName"].(string)
	return serviceAccount, runtimeClass, named
}

// notePodInput records an object of the input that a Pod's create after
// it reads (its apply's result).
func (s *Cluster) notePodInput(result *unstructured.Unstructured) {
	gk := result.GroupVersionKind().GroupKind()
	if !podInputKinds[gk] {
		return
	}
	u := result.DeepCopy()
	// The LimitRange's own defaults (a default limit from the max), as the
	// apiserver stores it.
	defaults.Finish(u)
	if s.podInputs == nil {
		s.podInputs = map[schema.GroupKind][]*unstructured.Unstructured{}
	}
	s.podInputs[gk] = append(s.podInputs[gk], u)
}

// podInputsFor are the objects of the input, applied before pod, that its
// create reads.
func (s *Cluster) podInputsFor(pod *unstructured.Unstructured) []*unstructured.Unstructured {
	sa, rc, _ := podNames(pod)
	pc, _, _ := unstructured.NestedString(pod.Object, "spec", "priorityClassName")
	var out []*unstructured.Unstructured
	for gk, objs := range s.podInputs {
		for _, u := range objs {
			var reads bool
			switch gk.Kind {
			case "ServiceAccount":
				reads = u.GetNamespace() == pod.GetNamespace() && u.GetName() == sa
			case "LimitRange":
				reads = u.GetNamespace() == pod.GetNamespace()
			case "RuntimeClass":
				reads = u.GetName() == rc
			case "PriorityClass":
				def, _, _ := unstructured.NestedBool(u.Object, "globalDefault")
				reads = u.GetName() == pc || pc == "" && def
			}
			if reads {
				out = append(out, u)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return kube.ObjectName(out[i]) < kube.ObjectName(out[j]) })
	return out
}

// podUnverifiable says why the server's dry run of a Pod's create, sent
// now, would not see what the input applies before it ("": it would).
func (s *Cluster) podUnverifiable(pod *unstructured.Unstructured) string {
	var names []string
	for _, u := range s.podInputsFor(pod) {
		names = append(names, kube.ObjectName(u))
	}
	if len(names) == 0 {
		return ""
	}
	return fmt.Sprintf("the input applies %s before this Pod: the server's dry run, sent now, would not see it", strings.Join(names, ", "))
}

// podReads reads, side by side and once a run each, what the admission
// of pod's create reads: its ServiceAccount, the PriorityClasses, its
// RuntimeClass, its namespace's LimitRanges; what the input applies
// before it stands in for the cluster's.
func (s *Cluster) podReads(ctx context.Context, pod *unstructured.Unstructured) *admission.PodReads {
	ns := pod.GetNamespace()
	sa, rc, named := podNames(pod)
	reads := &admission.PodReads{Unread: map[string]string{}}
	type job struct {
		plugin string
		gvr    schema.GroupVersionResource
		ns     string
		name   string // "": a list
		into   func([]*unstructured.Unstructured)
	}
	jobs := []job{
		{"ServiceAccount", serviceAccountsGVR, ns, sa, func(items []*unstructured.Unstructured) {
			if len(items) > 0 {
				reads.ServiceAccount = items[0]
			}
		}},
		{"Priority", priorityClassesGVR, "", "", func(items []*unstructured.Unstructured) { reads.PriorityClasses = items }},
		{"LimitRanger", limitRangesGVR, ns, "", func(items []*unstructured.Unstructured) { reads.LimitRanges = items }},
	}
	if named {
		jobs = append(jobs, job{"RuntimeClass", runtimeClassesGVR, "", rc, func(items []*unstructured.Unstructured) {
			if len(items) > 0 {
				reads.RuntimeClass = items[0]
			}
		}})
	}
	results := make([]*podRead, len(jobs))
	var g errgroup.Group
	for i, j := range jobs {
		g.Go(func() error {
			results[i] = s.podRead(ctx, j.gvr, j.ns, j.name)
			return nil
		})
	}
	_ = g.Wait() // (a read that fails is said in reads.Unread)
	for i, j := range jobs {
		j.into(results[i].items)
		if results[i].why != "" {
			reads.Unread[j.plugin] = results[i].why
		}
	}
	if reads.ServiceAccount == nil && sa == "default" && s.inputNamespaces[ns] != nil && reads.Unread["ServiceAccount"] == "" {
		// The input creates the namespace: the service account
		// controller gives it its default account, which the plugin
		// waits for.
		reads.ServiceAccount = &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ServiceAccount",
			"metadata": map[string]any{"name": sa, "namespace": ns}}}
	}
	for _, u := range s.podInputsFor(pod) {
		switch u.GetKind() {
		case "ServiceAccount":
			reads.ServiceAccount = u
			delete(reads.Unread, "ServiceAccount")
		case "RuntimeClass":
			reads.RuntimeClass = u
			delete(reads.Unread, "RuntimeClass")
		case "PriorityClass":
			reads.PriorityClasses = replaceByName(reads.PriorityClasses, u)
		case "LimitRange":
			reads.LimitRanges = replaceByName(reads.LimitRanges, u)
		}
	}
	return reads
}

// replaceByName is list with u in place of the item of its name.
func replaceByName(list []*unstructured.Unstructured, u *unstructured.Unstructured) []*unstructured.Unstructured {
	out := []*unstructured.Unstructured{u}
	for _, it := range list {
		if it.GetName() != u.GetName() {
			out = append(out, it)
		}
	}
	return out
}

// podRead gets gvr's object ns/name, or lists gvr in ns (name ""), once a
// run. An object or a resource that does not exist is none.
func (s *Cluster) podRead(ctx context.Context, gvr schema.GroupVersionResource, ns, name string) *podRead {
	v, _ := s.podReadCache.LoadOrStore(gvr.Resource+"/"+ns+"/"+name, &podRead{})
	r := v.(*podRead)
	r.once.Do(func() {
		client := s.Cluster.Dynamic.Resource(gvr).Namespace(ns)
		verb, what := "list", gvr.GroupResource().String()
		var err error
		if name == "" {
			var l *unstructured.UnstructuredList
			if l, err = client.List(ctx, metav1.ListOptions{}); err == nil {
				for i := range l.Items {
					r.items = append(r.items, &l.Items[i])
				}
			}
		} else {
			verb, what = "get", gvr.GroupResource().String()+" "+name
			var u *unstructured.Unstructured
			if u, err = client.Get(ctx, name, metav1.GetOptions{}); err == nil {
				r.items = []*unstructured.Unstructured{u}
			}
		}
		if ns != "" {
			what += " in namespace " + ns
		}
		switch {
		case err == nil, apierrors.IsNotFound(err):
		case apierrors.IsForbidden(err):
			r.why = fmt.Sprintf("could not %s %s (forbidden: check with %s)", verb, what, kube.CanI(verb, gvr.GroupResource(), ns, s.Cluster.CommandFlags))
		default:
			r.why = fmt.Sprintf("could not %s %s (%v)", verb, what, s.Cluster.Friendly(err))
		}
	})
	return r
}
