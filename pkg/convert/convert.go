package convert

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// kind converts the objects of one group-kind between its versions.
type kind struct {
	versions []string
	convert  func(in *unstructured.Unstructured, to string) (*unstructured.Unstructured, error)
}

func (k kind) has(v string) bool {
	for _, x := range k.versions {
		if x == v {
			return true
		}
	}
	return false
}

// registry holds the built-in kinds served at several versions of
// different shape (Kubernetes 1.37).
var registry = map[schema.GroupKind]kind{
	{Group: "autoscaling", Kind: "HorizontalPodAutoscaler"}: {versions: []string{"v1", "v2"}, convert: convertHPA},
}

// Handles tells whether ToVersion converts a kind between two versions.
func Handles(gk schema.GroupKind, from, to string) bool {
	k, ok := registry[gk]
	return ok && k.has(from) && k.has(to)
}

// ToVersion converts obj to version to of its group. ok is false when no
// converter is registered for the kind between those versions.
func ToVersion(obj *unstructured.Unstructured, to string) (out *unstructured.Unstructured, ok bool, err error) {
	gvk := obj.GroupVersionKind()
	if !Handles(gvk.GroupKind(), gvk.Version, to) {
		return nil, false, nil
	}
	if gvk.Version == to {
		return obj.DeepCopy(), true, nil
	}
	out, err = registry[gvk.GroupKind()].convert(obj, to)
	if err != nil {
		return nil, true, fmt.Errorf("converting %s to %s: %w", gvk, to, err)
	}
	return out, true, nil
}

// fromUnstructured decodes as the apiserver's scheme does before it
// converts an unstructured object (unknown fields are dropped).
func fromUnstructured(in *unstructured.Unstructured, out any) error {
	return runtime.DefaultUnstructuredConverter.FromUnstructured(in.UnstructuredContent(), out)
}

func toUnstructured(in any) (*unstructured.Unstructured, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(in)
	if err != nil {
		return nil, err
	}
	return &unstructured.Unstructured{Object: m}, nil
}
