package conflict

import (
	"context"
	"fmt"
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Autoscaler is a HorizontalPodAutoscaler whose scaleTargetRef is the
// applied object: its controller writes .spec.replicas through /scale.
type Autoscaler struct {
	Name        string `json:"name"`
	MinReplicas int64  `json:"minReplicas"`
	MaxReplicas int64  `json:"maxReplicas"`
}

// AutoscalerLister is a Source that can list the HPAs of a namespace.
type AutoscalerLister interface {
	Autoscalers(ctx context.Context, namespace string) ([]unstructured.Unstructured, error)
}

var hpaGVR = schema.GroupVersionResource{Group: "autoscaling", Version: "v2", Resource: "horizontalpodautoscalers"}

// Autoscalers implements AutoscalerLister, reading autoscaling/v2 (HPAs
// made at v1 are served at v2 too), once per namespace and run: many
// manifests of one namespace share the list.
func (s *ClusterSource) Autoscalers(ctx context.Context, namespace string) ([]unstructured.Unstructured, error) {
	s.hpasMu.Lock()
	defer s.hpasMu.Unlock()
	if items, ok := s.hpas[namespace]; ok {
		return items, nil
	}
	list, err := s.Cluster.Dynamic.Resource(hpaGVR).Namespace(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	if s.hpas == nil {
		s.hpas = map[string][]unstructured.Unstructured{}
	}
	s.hpas[namespace] = list.Items
	return list.Items, nil
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

// AutoscalersOf finds the HPAs that target obj when the manifest sets
// .spec.replicas. A failure to list them is a warning: the prediction
// stands without it.
func AutoscalersOf(ctx context.Context, src Source, obj *unstructured.Unstructured) ([]Autoscaler, string) {
	lister, ok := src.(AutoscalerLister)
	if !ok {
		return nil, ""
	}
	if _, sets, _ := unstructured.NestedFieldNoCopy(obj.Object, "spec", "replicas"); !sets {
		return nil, ""
	}
	hpas, err := lister.Autoscalers(ctx, obj.GetNamespace())
	if err != nil {
		return nil, fmt.Sprintf("could not list the HorizontalPodAutoscalers of namespace %s (%v): an autoscaler of this object would own .spec.replicas", obj.GetNamespace(), err)
	}
	group := obj.GroupVersionKind().Group
	var out []Autoscaler
	for _, h := range hpas {
		ref, _, _ := unstructured.NestedMap(h.Object, "spec", "scaleTargetRef")
		kind, _ := ref["kind"].(string)
		name, _ := ref["name"].(string)
		apiVersion, _ := ref["apiVersion"].(string)
		gv, _ := schema.ParseGroupVersion(apiVersion)
		if kind != obj.GetKind() || name != obj.GetName() || gv.Group != group {
			continue
		}
		a := Autoscaler{Name: h.GetName(), MinReplicas: 1}
		if v, ok, _ := unstructured.NestedInt64(h.Object, "spec", "minReplicas"); ok {
			a.MinReplicas = v
		}
		a.MaxReplicas, _, _ = unstructured.NestedInt64(h.Object, "spec", "maxReplicas")
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, ""
}
