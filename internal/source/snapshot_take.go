package source

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/resource"

	"github.com/kubectl-ssa/kubectl-ssa/internal/kube"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
)

// TakeOptions say what a snapshot selects.
type TakeOptions struct {
	Kinds         kube.Kinds
	LabelSelector string
	// Salt keys the hashes of Secret values.
	Salt []byte
	Now  time.Time
}

var secretKind = schema.GroupKind{Kind: "Secret"}

// TakeSnapshot lists what the prediction of an apply to the selected
// objects reads, with gets and lists only: the objects, the namespaces
// and CRDs, admission's configuration (policies, their bindings and
// params, webhook configurations, the classes, LimitRanges,
// ServiceAccounts, PriorityClasses, RuntimeClasses), the autoscalers,
// discovery, the server's version and the OpenAPI v3 documents of the
// group-versions listed. A Secret's values are kept as salted hashes.
func (s *Cluster) TakeSnapshot(ctx context.Context, o TakeOptions) (*v1alpha1.Snapshot, error) {
	snap := &v1alpha1.Snapshot{TypeMeta: v1alpha1.NewTypeMeta(v1alpha1.SnapshotKind), TakenAt: metav1.NewTime(o.Now.UTC().Truncate(time.Second)),
		Salt: hex.EncodeToString(o.Salt)}
	v, err := s.Cluster.Discovery.ServerVersion()
	if err != nil {
		return nil, fmt.Errorf("reading the server's version: %w", s.Cluster.Friendly(err))
	}
	snap.ServerVersion = *v
	if snap.Discovery, err = s.aggregatedDiscovery(ctx); err != nil {
		return nil, err
	}
	rt, err := newSnapshotTransport(snap)
	if err != nil {
		return nil, err
	}
	if snap.Lists, err = s.listAll(ctx, snapshotPlan(o, rt.kinds)); err != nil {
		return nil, err
	}
	params, err := s.listAll(ctx, s.paramLists(snap.Lists))
	if err != nil {
		return nil, err
	}
	snap.Lists = append(snap.Lists, params...)
	for i := range snap.Lists {
		hashSecrets(&snap.Lists[i], o.Salt)
	}
	sort.Slice(snap.Lists, func(i, j int) bool { return listKey(snap.Lists[i]) < listKey(snap.Lists[j]) })
	if snap.OpenAPI, err = s.openAPIDocuments(snap.Lists); err != nil {
		return nil, err
	}
	return snap, nil
}

// aggregatedDiscovery reads /api and /apis as aggregated discovery
// documents (served since Kubernetes 1.30).
func (s *Cluster) aggregatedDiscovery(ctx context.Context) (map[string]json.RawMessage, error) {
	out := map[string]json.RawMessage{}
	for _, path := range []string{"/api", "/apis"} {
		res := s.Cluster.Discovery.RESTClient().Get().AbsPath(path).SetHeader("Accept", aggregatedDiscovery).Do(ctx)
		raw, err := res.Raw()
		if err != nil {
			return nil, fmt.Errorf("reading discovery (%s): %w", path, s.Cluster.Friendly(err))
		}
		var ct string
		res.ContentType(&ct)
		if ct != aggregatedDiscovery {
			return nil, fmt.Errorf("the server does not serve aggregated discovery at %s (Kubernetes 1.30 or later does): it can't be snapshotted", path)
		}
		out[path] = raw
	}
	return out, nil
}

// admissionResources are what admission lists, at the newest version
// served (as listServed reads them).
var admissionResources = []string{"validatingadmissionpolicies", "validatingadmissionpolicybindings", "mutatingadmissionpolicies",
	"mutatingadmissionpolicybindings", "validatingwebhookconfigurations", "mutatingwebhookconfigurations"}

// snapshotPlan is the lists a snapshot makes: the kinds selected, then
// what the reads of their apply make, in the selection's namespace
// (all: ""), of the resources served.
func snapshotPlan(o TakeOptions, served map[schema.GroupVersionResource]string) []v1alpha1.SnapshotList {
	var plan []v1alpha1.SnapshotList
	add := func(gvr schema.GroupVersionResource, ns, selector string) {
		if _, ok := served[gvr]; ok {
			plan = append(plan, v1alpha1.SnapshotList{Group: gvr.Group, Version: gvr.Version, Resource: gvr.Resource, Namespace: ns, LabelSelector: selector})
		}
	}
	for _, r := range o.Kinds.Resources {
		ns := ""
		if r.Namespaced {
			ns = o.Kinds.Namespace
		}
		add(r.GVR, ns, o.LabelSelector)
	}
	for _, gvr := range []schema.GroupVersionResource{namespaceGVR, crdGVR, priorityClassesGVR, runtimeClassesGVR,
		{Group: "storage.k8s.io", Version: "v1", Resource: "storageclasses"}, {Group: "networking.k8s.io", Version: "v1", Resource: "ingressclasses"}} {
		add(gvr, "", "")
	}
	for _, gvr := range []schema.GroupVersionResource{hpaGVR, limitRangesGVR, serviceAccountsGVR} {
		add(gvr, o.Kinds.Namespace, "")
	}
	for _, res := range admissionResources {
		for _, v := range []string{"v1", "v1beta1", "v1alpha1"} {
			if gvr := (schema.GroupVersionResource{Group: admissionGroup, Version: v, Resource: res}); served[gvr] != "" {
				add(gvr, "", "")
				break
			}
		}
	}
	return newLists(plan, nil)
}

// paramLists are the lists of the params of the policies listed: every
// object of each paramKind.
func (s *Cluster) paramLists(lists []v1alpha1.SnapshotList) []v1alpha1.SnapshotList {
	var plan []v1alpha1.SnapshotList
	for _, l := range lists {
		if l.Group != admissionGroup || (l.Resource != "validatingadmissionpolicies" && l.Resource != "mutatingadmissionpolicies") {
			continue
		}
		for _, it := range l.Items {
			apiVersion, _, _ := unstructured.NestedString(it, "spec", "paramKind", "apiVersion")
			kind, _, _ := unstructured.NestedString(it, "spec", "paramKind", "kind")
			m, err := s.Cluster.Mapping(schema.FromAPIVersionAndKind(apiVersion, kind))
			if kind == "" || err != nil {
				continue
			}
			plan = append(plan, v1alpha1.SnapshotList{Group: m.Resource.Group, Version: m.Resource.Version, Resource: m.Resource.Resource})
		}
	}
	return newLists(plan, lists)
}

func listKey(l v1alpha1.SnapshotList) string {
	return l.Group + "/" + l.Version + "/" + l.Resource + "/" + l.Namespace + "/" + l.LabelSelector
}

// newLists are the lists of plan, each once, that are not in have.
func newLists(plan, have []v1alpha1.SnapshotList) []v1alpha1.SnapshotList {
	seen := map[string]bool{}
	for _, l := range have {
		seen[listKey(l)] = true
	}
	var out []v1alpha1.SnapshotList
	for _, l := range plan {
		if k := listKey(l); !seen[k] {
			seen[k] = true
			out = append(out, l)
		}
	}
	return out
}

// listAll makes the lists of plan side by side, each in chunks; a list
// the server refuses is kept with its reason, one of a resource no longer
// served is left out.
func (s *Cluster) listAll(ctx context.Context, plan []v1alpha1.SnapshotList) ([]v1alpha1.SnapshotList, error) {
	var mu sync.Mutex
	var out []v1alpha1.SnapshotList
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for _, l := range plan {
		g.Go(func() error {
			err := s.listChunks(gctx, &l)
			var status apierrors.APIStatus
			switch {
			case apierrors.IsNotFound(err):
				return nil
			case apierrors.IsForbidden(err) && asStatus(err, &status):
				l.Refused, l.Items = status.Status().Message, nil
			case err != nil:
				return fmt.Errorf("listing %s: %w", schema.GroupResource{Group: l.Group, Resource: l.Resource}, s.Cluster.Friendly(err))
			}
			mu.Lock()
			out = append(out, l)
			mu.Unlock()
			return nil
		})
	}
	err := g.Wait()
	return out, err
}

func asStatus(err error, status *apierrors.APIStatus) bool {
	return errors.As(err, status)
}

// listChunks lists l into its items, 500 at a time, sorted.
func (s *Cluster) listChunks(ctx context.Context, l *v1alpha1.SnapshotList) error {
	ri := s.Cluster.Dynamic.Resource(schema.GroupVersionResource{Group: l.Group, Version: l.Version, Resource: l.Resource}).Namespace(l.Namespace)
	opts := &metav1.ListOptions{LabelSelector: l.LabelSelector, Limit: 500}
	l.Items = []map[string]any{}
	err := resource.FollowContinue(opts, func(opts metav1.ListOptions) (runtime.Object, error) {
		list, err := ri.List(ctx, opts)
		if err != nil {
			return nil, err
		}
		for i := range list.Items {
			l.Items = append(l.Items, list.Items[i].Object)
		}
		return list, nil
	})
	sort.Slice(l.Items, func(i, j int) bool {
		a, b := metaOf(l.Items[i]), metaOf(l.Items[j])
		return a.Namespace+"/"+a.Name < b.Namespace+"/"+b.Name
	})
	return err
}

// hashSecrets replaces each value of the Secrets of l (data, and the
// last-applied configuration, which holds them too) by its salted hash;
// of Helm's storage objects (Secrets and ConfigMaps) it keeps the release
// sanitized (sanitizeHelmData).
func hashSecrets(l *v1alpha1.SnapshotList, salt []byte) {
	if l.Group != "" || l.Resource != "secrets" && l.Resource != "configmaps" {
		return
	}
	for _, it := range l.Items {
		switch {
		case helmStorage(l.Resource, it):
			sanitizeHelmData(it, l.Resource == "secrets", salt)
		case l.Resource == "configmaps":
			continue
		default:
			hashValues(it, salt)
		}
		md, _ := it["metadata"].(map[string]any)
		if ann, ok := md["annotations"].(map[string]any); ok {
			if v, ok := ann[lastApplied].(string); ok {
				ann[lastApplied] = hashLastApplied(v, salt)
			}
		}
	}
}

// hashValues replaces each value of a Secret's data (decoded) and
// stringData by its salted hash (the same value, the same hash).
func hashValues(secret map[string]any, salt []byte) {
	for _, field := range []string{"data", "stringData"} {
		m, _ := secret[field].(map[string]any)
		for k, v := range m {
			s, _ := v.(string)
			b := []byte(s)
			if field == "data" {
				if d, err := base64.StdEncoding.DecodeString(s); err == nil {
					b = d
				}
			}
			m[k] = HashValue(salt, b)
		}
	}
}

// hashLastApplied hashes the values of the Secret a last-applied
// configuration holds, and keeps the rest: the apiserver reads it (an
// apply by "kubectl" may take the fields it holds at their live value).
// One that is not a JSON object is hashed whole.
func hashLastApplied(v string, salt []byte) string {
	var m map[string]any
	if err := json.Unmarshal([]byte(v), &m); err != nil || m == nil {
		return HashValue(salt, []byte(v))
	}
	hashValues(m, salt)
	b, err := json.Marshal(m)
	if err != nil {
		return HashValue(salt, []byte(v))
	}
	if strings.HasSuffix(v, "\n") {
		b = append(b, '\n')
	}
	return string(b)
}

const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// openAPIDocuments reads the OpenAPI v3 documents of the group-versions
// listed, and of those the selected objects' managers recorded, with
// autoscaling/v1's (the Scale type).
func (s *Cluster) openAPIDocuments(lists []v1alpha1.SnapshotList) (map[string]json.RawMessage, error) {
	want := map[string]bool{"api/v1": true, "apis/autoscaling/v1": true}
	for _, l := range lists {
		want[docPath(schema.GroupVersion{Group: l.Group, Version: l.Version})] = true
		for _, it := range l.Items {
			for _, e := range ownership.Heads(&unstructured.Unstructured{Object: it}) {
				if gv, err := schema.ParseGroupVersion(e.APIVersion); err == nil {
					want[docPath(gv)] = true
				}
			}
		}
	}
	paths, err := s.Cluster.Discovery.OpenAPIV3().Paths()
	if err != nil {
		return nil, fmt.Errorf("reading the OpenAPI v3 index: %w", s.Cluster.Friendly(err))
	}
	out := map[string]json.RawMessage{}
	for p := range want {
		gv, ok := paths[p]
		if !ok {
			continue
		}
		doc, err := gv.Schema("application/json")
		if err != nil {
			return nil, fmt.Errorf("reading the OpenAPI v3 document %s: %w", p, s.Cluster.Friendly(err))
		}
		out[p] = doc
	}
	return out, nil
}

func docPath(gv schema.GroupVersion) string {
	if gv.Group == "" {
		return "api/" + gv.Version
	}
	return "apis/" + gv.Group + "/" + gv.Version
}
