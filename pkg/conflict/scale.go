package conflict

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
)

// SimulateScale simulates an apply to the scale subresource, as the
// apiserver does it: the parent's managedFields are converted to the
// autoscaling/v1 Scale's view (.spec.replicas) with the apiserver's
// ScaleHandler, the apply runs on the Scale, and the result is converted
// back to the parent. The manifest is a Scale (autoscaling/v1) or the
// parent kind, of which only .spec.replicas counts.
func SimulateScale(in Input) (*Simulation, error) {
	if in.Live == nil {
		return nil, errors.New("the scale subresource of an object that does not exist can't be applied")
	}
	parentGV := in.Live.GroupVersionKind().GroupVersion()
	replicas, found, _ := unstructured.NestedFieldNoCopy(in.Applied.Object, "spec", "replicas")
	if !found {
		return nil, fmt.Errorf("%s: an apply to /scale needs spec.replicas", ownership.ObjectName(in.Live.GetKind(), in.Live.GetNamespace(), in.Live.GetName()))
	}
	mappings := managedfields.ResourcePathMappings{}
	for _, e := range ownership.Heads(in.Live) {
		mappings[e.APIVersion] = fieldpath.MakePathOrDie("spec", "replicas")
	}
	mappings[parentGV.String()] = fieldpath.MakePathOrDie("spec", "replicas")
	h := managedfields.NewScaleHandler(in.Live.GetManagedFields(), parentGV, mappings)
	entries, err := h.ToSubresource()
	if err != nil {
		return nil, err
	}
	scaleGVK := schema.GroupVersionKind{Group: "autoscaling", Version: "v1", Kind: "Scale"}
	live := &unstructured.Unstructured{Object: map[string]any{}}
	live.SetGroupVersionKind(scaleGVK)
	live.SetName(in.Live.GetName())
	live.SetNamespace(in.Live.GetNamespace())
	live.SetUID(in.Live.GetUID())
	live.SetResourceVersion(in.Live.GetResourceVersion())
	live.SetCreationTimestamp(in.Live.GetCreationTimestamp())
	live.SetManagedFields(entries)
	if cur, ok, _ := unstructured.NestedFieldNoCopy(in.Live.Object, "spec", "replicas"); ok {
		_ = unstructured.SetNestedField(live.Object, cur, "spec", "replicas")
	}
	applied := &unstructured.Unstructured{Object: map[string]any{}}
	applied.SetGroupVersionKind(scaleGVK)
	applied.SetName(in.Live.GetName())
	applied.SetNamespace(in.Live.GetNamespace())
	_ = unstructured.SetNestedField(applied.Object, replicas, "spec", "replicas")

	sin := in
	sin.Live, sin.Applied, sin.CRD, sin.HasStatus = live, applied, false, false
	if in.ScaleSchema == nil {
		return nil, errors.New("an apply to /scale needs the cluster's autoscaling/v1 schema (it can't be simulated with --local)")
	}
	sin.Schema = in.ScaleSchema
	sin.Served = nil
	r, err := Simulate(sin)
	if err != nil {
		return nil, err
	}
	parent, err := h.ToParent(r.ManagedFields)
	if err != nil {
		return nil, err
	}
	if r.Message == "" {
		r.ManagedFields = parent
	} else {
		r.ManagedFields = in.Live.GetManagedFields()
	}
	// The conflicts name the owners' entries as the Scale sees them
	// (autoscaling/v1): name the object's own entries.
	for i, cf := range r.Conflicts {
		for _, e := range ownership.Heads(in.Live) {
			if e.Manager == cf.Manager && v1alpha1.Operation(e.Operation) == cf.Operation && v1alpha1.Subresource(e.Subresource) == cf.Subresource {
				r.Conflicts[i].APIVersion = e.APIVersion
				break
			}
		}
	}
	r.Object = ownership.RefOf(in.Live)
	r.Live = in.Live
	noteWas(r)
	r.Result = in.Live.DeepCopy()
	if r.Message == "" {
		_ = unstructured.SetNestedField(r.Result.Object, replicas, "spec", "replicas")
		r.Result.SetManagedFields(parent)
	}
	return r, nil
}
