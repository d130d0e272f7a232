package conflict

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/defaults"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
)

var _ Source = (*OfflineSource)(nil)

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
		vm, _ := v.(map[string]any)
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
		return nil, fmt.Errorf("%s: the live file has it at %s, the manifest at %s: save the live object at the manifest's apiVersion", ownership.ObjectName(obj.GetKind(), obj.GetNamespace(), obj.GetName()), t.Live.GetAPIVersion(), obj.GetAPIVersion())
	}
	_, t.HasStatus, _ = unstructured.NestedFieldNoCopy(t.Live.Object, "status")
	if len(ownership.Heads(t.Live)) == 0 {
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
