package conflict

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/defaults"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/pathlang"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/tools"
)

// AutoscalerLister lists the HPAs of a namespace (every Source does).
type AutoscalerLister interface {
	Autoscalers(ctx context.Context, namespace string) ([]unstructured.Unstructured, error)
}

// Autoscalers implements AutoscalerLister: the HPAs among the saved
// objects.
func (s *OfflineSource) Autoscalers(_ context.Context, namespace string) ([]unstructured.Unstructured, error) {
	var out []unstructured.Unstructured
	for _, l := range s.Lives {
		if l.GroupVersionKind().GroupKind() == (schema.GroupKind{Group: "autoscaling", Kind: "HorizontalPodAutoscaler"}) && l.GetNamespace() == namespace {
			out = append(out, *l)
		}
	}
	return out, nil
}

// AutoscalersOf finds the HPAs that target obj when the manifest has a
// .spec (whose replicas they own: a manifest that sets it fights them, one
// that drops it may reset it). A failure to list them is a warning: the
// prediction stands without it.
func AutoscalersOf(ctx context.Context, lister AutoscalerLister, obj *unstructured.Unstructured) ([]v1alpha1.Autoscaler, string) {
	if _, ok := obj.Object["spec"].(map[string]any); !ok || obj.GetNamespace() == "" {
		// (An autoscaler targets an object of its own namespace: without
		// one, nothing can target it, and listing "" lists them all.)
		return nil, ""
	}
	hpas, err := lister.Autoscalers(ctx, obj.GetNamespace())
	if err != nil {
		return nil, fmt.Sprintf("could not list the HorizontalPodAutoscalers of namespace %s (%v): an autoscaler of this object would own .spec.replicas", obj.GetNamespace(), err)
	}
	return Targeting(hpas, obj), ""
}

// Targeting are the HPAs among hpas that scale obj (an HPA without a
// namespace, from an input, is taken as in obj's), ordered by name.
func Targeting(hpas []unstructured.Unstructured, obj *unstructured.Unstructured) []v1alpha1.Autoscaler {
	group := obj.GroupVersionKind().Group
	var out []v1alpha1.Autoscaler
	for _, h := range hpas {
		ref, _, _ := unstructured.NestedMap(h.Object, "spec", "scaleTargetRef")
		kind, _ := ref["kind"].(string)
		name, _ := ref["name"].(string)
		apiVersion, _ := ref["apiVersion"].(string)
		gv, _ := schema.ParseGroupVersion(apiVersion)
		ns := h.GetNamespace()
		if ns == "" {
			ns = obj.GetNamespace()
		}
		if kind != obj.GetKind() || name != obj.GetName() || gv.Group != group || ns != obj.GetNamespace() {
			continue
		}
		a := v1alpha1.Autoscaler{Name: h.GetName(), MinReplicas: 1}
		if v, ok, _ := unstructured.NestedInt64(h.Object, "spec", "minReplicas"); ok {
			a.MinReplicas = v
		}
		a.MaxReplicas, _, _ = unstructured.NestedInt64(h.Object, "spec", "maxReplicas")
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// setsReplicas tells whether the manifest sets .spec.replicas.
func setsReplicas(obj *unstructured.Unstructured) bool {
	_, ok, _ := unstructured.NestedFieldNoCopy(obj.Object, "spec", "replicas")
	return ok
}

// controlledResets are the resets and removals of .spec.replicas in r
// that an autoscaler of the object undoes: those of the cluster (live),
// then those the input brings (input).
func controlledResets(r *Simulation, live, input []v1alpha1.Autoscaler) []v1alpha1.ControlledReset {
	var out []v1alpha1.ControlledReset
	add := func(cr v1alpha1.ControlledReset) {
		for _, a := range live {
			cr.Controller = "HorizontalPodAutoscaler " + a.Name
			out = append(out, cr)
		}
		for _, a := range input {
			cr.Controller, cr.InInput = "HorizontalPodAutoscaler "+a.Name, true
			out = append(out, cr)
		}
	}
	for _, rs := range r.Reset {
		if !rs.Unchanged && !rs.Kept && rs.PathElements.Equals(replicasPath) {
			add(v1alpha1.ControlledReset{Path: rs.Path, Value: rs.Value, Was: rs.Was})
		}
	}
	for _, p := range r.Removed {
		if fieldpath.Path(p).Equals(replicasPath) {
			cr := v1alpha1.ControlledReset{Path: p, Removed: true}
			if v, ok := pathlang.Lookup(r.Live.Object, replicasPath); ok {
				cr.Was = &v
			}
			add(cr)
		}
	}
	return append(out, ownedByControllers(r, out, live)...)
}

// ownedByControllers are the other resets and removals of fields a
// controller owns in the live object (tools.IsController): a write that
// takes a field from its owner (Helm's client-side patch deletes what the
// last revision rendered, whoever owns it) is undone by that controller.
// An apply keeps the fields others own, so this finds none for it.
func ownedByControllers(r *Simulation, seen []v1alpha1.ControlledReset, listed []v1alpha1.Autoscaler) []v1alpha1.ControlledReset {
	if r.Live == nil || r.Action == v1alpha1.ActionCreate {
		return nil
	}
	done := map[string]bool{}
	for _, cr := range seen {
		done[cr.Path.APIServerString()] = true
	}
	entries := r.Live.GetManagedFields()
	var out []v1alpha1.ControlledReset
	check := func(p pathlang.Path, cr v1alpha1.ControlledReset) {
		if done[p.APIServerString()] {
			return
		}
		owners, _ := ownership.Owners(entries, fieldpath.Path(p))
		for _, e := range owners {
			o := ownership.OwnerOf(e)
			if e.Manager == r.FieldManager || !tools.IsController(o) {
				continue
			}
			cr.Path, cr.Controller = p, fmt.Sprintf("%q (%s)", e.Manager, controllerSays(o, p))
			if len(listed) > 0 && fieldpath.Path(p).Equals(replicasPath) {
				cr.Controller = "HorizontalPodAutoscaler " + listed[0].Name
			}
			out = append(out, cr)
			done[p.APIServerString()] = true
			return
		}
	}
	for _, rs := range r.Reset {
		if !rs.Unchanged && !rs.Kept {
			check(rs.Path, v1alpha1.ControlledReset{Value: rs.Value, Was: rs.Was})
		}
	}
	for _, p := range r.Removed {
		cr := v1alpha1.ControlledReset{Removed: true}
		if v, ok := pathlang.Lookup(r.Live.Object, fieldpath.Path(p)); ok {
			cr.Was = &v
		}
		check(p, cr)
	}
	if r.ClientSide {
		for _, p := range overwritten(r, entries) {
			was, _ := pathlang.Lookup(r.Live.Object, p)
			now, _ := pathlang.Lookup(r.Result.Object, p)
			check(pathlang.Path(p), v1alpha1.ControlledReset{Set: true, Value: now, Was: &was})
		}
	}
	return out
}

// overwritten are the leaves other managers own in the live object whose
// value a client-side write changes (it never conflicts).
func overwritten(r *Simulation, entries []metav1.ManagedFieldsEntry) []fieldpath.Path {
	var out []fieldpath.Path
	for _, e := range entries {
		if e.Manager == r.FieldManager {
			continue
		}
		set, err := ownership.DecodeEntry(e)
		if err != nil {
			continue
		}
		set.Leaves().Iterate(func(p fieldpath.Path) {
			was, inLive := pathlang.Lookup(r.Live.Object, p)
			now, inResult := pathlang.Lookup(r.Result.Object, p)
			if inLive && inResult && !defaults.SameJSON(was, now) {
				out = append(out, p.Copy())
			}
		})
	}
	return out
}

// controllerSays names a controller owner as the catalogue knows it.
func controllerSays(o v1alpha1.Owner, p pathlang.Path) string {
	if says := tools.Describe(o, p.APIServerString()); says != "" {
		return says
	}
	return "a controller"
}

var replicasPath = fieldpath.MakePathOrDie("spec", "replicas")

// ReplicasHolders reads, from the live object, who besides the
// autoscaler's controller holds .spec.replicas: owners in managedFields,
// and the client-side apply manager (in managedFields) whose last-applied
// annotation holds it. Ordered by manager name; nil for an object that does not exist.
func ReplicasHolders(live *unstructured.Unstructured) []v1alpha1.ReplicasHolder {
	if live == nil {
		return nil
	}
	byManager := map[string]*v1alpha1.ReplicasHolder{}
	add := func(manager string) *v1alpha1.ReplicasHolder {
		if h, ok := byManager[manager]; ok {
			return h
		}
		h := &v1alpha1.ReplicasHolder{Manager: manager}
		byManager[manager] = h
		return h
	}
	entries := live.GetManagedFields()
	owners, _ := ownership.Owners(entries, replicasPath)
	for _, e := range owners {
		// A handover's temporary manager holds it for the autoscaler
		// already, until the autoscaler writes it.
		if e.Manager != v1alpha1.AutoscalerController && e.Manager != ownership.HandoverManager {
			add(e.Manager)
		}
	}
	if lastAppliedHoldsReplicas(live.GetAnnotations()[ownership.LastAppliedAnnotation]) {
		// The annotation's owner, as kubectl finds it. Without one (a
		// server-side apply migrated it), no handover can start from a
		// client-side manager: none is named.
		for _, e := range entries {
			if ownership.IsCSAEntry(e) {
				add(e.Manager).LastApplied = true
				break
			}
		}
	}
	out := make([]v1alpha1.ReplicasHolder, 0, len(byManager))
	for _, h := range byManager {
		out = append(out, *h)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Manager < out[j].Manager })
	return out
}

func lastAppliedHoldsReplicas(ann string) bool {
	if ann == "" {
		return false
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(ann), &doc); err != nil {
		return false
	}
	_, ok := pathlang.Lookup(doc, replicasPath)
	return ok
}

// noteAutoscalers puts what the autoscalers of the object mean into r
// (and its forced apply): with a manifest that sets .spec.replicas, the
// autoscalers it fights; with one that drops it, the resets they undo
// (listed, found in the cluster, or in the input: inInput).
func noteAutoscalers(r *Simulation, sent, live *unstructured.Unstructured, listed []v1alpha1.Autoscaler, warning string, inInput []unstructured.Unstructured) {
	if setsReplicas(sent) {
		if r.Autoscalers = listed; warning != "" {
			r.Warnings = append(r.Warnings, warning)
		}
		if len(r.Autoscalers) > 0 {
			r.ReplicasHolders = ReplicasHolders(live)
		}
		for _, s := range []*Simulation{r, r.Forced} {
			if s != nil {
				s.ControlledResets = ownedByControllers(s, nil, listed)
			}
		}
		return
	}
	input := Targeting(inInput, sent)
	for _, s := range []*Simulation{r, r.Forced} {
		if s == nil {
			continue
		}
		if s.ControlledResets = controlledResets(s, listed, input); len(s.ControlledResets) > 0 {
			s.ReplicasHolders = ReplicasHolders(live)
		}
	}
	if warning != "" && (len(r.Reset) > 0 || len(r.Removed) > 0) {
		r.Warnings = append(r.Warnings, warning)
	}
}
