package monitor

import (
	"encoding/json"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/tools"
)

// strip is the informers' transform: of each object's metadata it keeps
// what audit.Check and fight.Moves read (identity, managedFields, owner
// references, the tools' marks), so that the store holds little more
// than the managedFields. The last-applied annotation, often the largest
// part, is kept whole only when it is over threshold (a finding, the
// size is its evidence); under it, only its kind stays (what tells a
// controller's copy), which no check reads beyond.
func strip(threshold int) func(any) (any, error) {
	return func(obj any) (any, error) {
		m, ok := obj.(*metav1.PartialObjectMetadata)
		if !ok {
			return obj, nil
		}
		out := &metav1.PartialObjectMetadata{TypeMeta: m.TypeMeta, ObjectMeta: metav1.ObjectMeta{
			Name: m.Name, Namespace: m.Namespace, UID: m.UID, ResourceVersion: m.ResourceVersion,
			OwnerReferences: m.OwnerReferences, ManagedFields: m.ManagedFields,
			Labels: marks(m.Labels, true), Annotations: marks(m.Annotations, false),
		}}
		if s, ok := m.Annotations[ownership.LastAppliedAnnotation]; ok && len(s) <= threshold {
			out.Annotations[ownership.LastAppliedAnnotation] = appliedKind(s)
		}
		return out, nil
	}
}

// marks keeps the labels (or annotations) the tools leave (tools.Marks):
// all that audit reads of them.
func marks(values map[string]string, label bool) map[string]string {
	out := map[string]string{}
	for _, m := range tools.Marks {
		if m.Label != label {
			continue
		}
		if v, ok := values[m.Key]; ok {
			out[m.Key] = v
		}
	}
	return out
}

// appliedKind is a last-applied configuration reduced to its kind.
func appliedKind(s string) string {
	var applied struct {
		Kind string `json:"kind"`
	}
	if json.Unmarshal([]byte(s), &applied) != nil || applied.Kind == "" {
		return "{}"
	}
	b, _ := json.Marshal(map[string]string{"kind": applied.Kind})
	return string(b)
}
