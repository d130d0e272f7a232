package conflict

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/client-go/applyconfigurations"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
)

// builtinConverter is the schema of the built-in types compiled into
// client-go, for --local runs. Kinds the scheme does not know are reported
// as not registered, like versions a server does not serve.
type builtinConverter struct {
	tc managedfields.TypeConverter
}

// BuiltinSchema returns the offline schema of built-in types.
func BuiltinSchema() managedfields.TypeConverter {
	return &builtinConverter{tc: applyconfigurations.NewTypeConverter(scheme.Scheme)}
}

func (b *builtinConverter) ObjectToTyped(obj runtime.Object, opts ...typed.ValidationOptions) (*typed.TypedValue, error) {
	gvk := obj.GetObjectKind().GroupVersionKind()
	if !scheme.Scheme.Recognizes(gvk) {
		return nil, runtime.NewNotRegisteredErrForKind("client-go built-in schema", gvk)
	}
	return b.tc.ObjectToTyped(obj, opts...)
}

func (b *builtinConverter) TypedToObject(v *typed.TypedValue) (runtime.Object, error) {
	return b.tc.TypedToObject(v)
}

// IsBuiltin tells whether client-go's scheme knows a kind.
func IsBuiltin(gvk schema.GroupVersionKind) bool { return scheme.Scheme.Recognizes(gvk) }

// IsCustom tells whether a kind is served by a CustomResourceDefinition
// (or an aggregated API): its group is none of the kube-apiserver's own,
// which are client-go's plus the CRD and APIService groups the
// apiextensions and aggregator servers of the kube-apiserver serve.
func IsCustom(gvk schema.GroupVersionKind) bool {
	switch gvk.Group {
	case "apiextensions.k8s.io", "apiregistration.k8s.io":
		return false
	}
	return !scheme.Scheme.IsGroupRegistered(gvk.Group)
}

// CRDSchema builds a schema from a CustomResourceDefinition object (as
// read from a file), for --local runs with --schema. The CRD's structural
// schema is used as the apiserver uses it; metadata, which the apiserver
// types as ObjectMeta, is typed by deduction here (its lists are atomic),
// which the caller should say.
func CRDSchema(crd *unstructured.Unstructured) (*Schema, error) {
	group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
	kind, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "kind")
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	if group == "" || kind == "" || len(versions) == 0 {
		return nil, fmt.Errorf("%s is not a CustomResourceDefinition with spec.group, spec.names.kind and spec.versions", crd.GetName())
	}
	parts := map[schema.GroupVersion]*gvSchema{}
	for _, v := range versions {
		vm, _ := v.(map[string]any)
		name, _ := vm["name"].(string)
		raw, ok, _ := unstructured.NestedMap(vm, "schema", "openAPIV3Schema")
		if !ok {
			raw = map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}
		}
		b, err := json.Marshal(raw)
		if err != nil {
			return nil, err
		}
		s := &spec.Schema{}
		if err := json.Unmarshal(b, s); err != nil {
			return nil, fmt.Errorf("the schema of %s version %s: %w", crd.GetName(), name, err)
		}
		if s.Properties == nil {
			s.Properties = map[string]spec.Schema{}
		}
		s.Properties["apiVersion"] = *spec.StringProperty()
		s.Properties["kind"] = *spec.StringProperty()
		meta := spec.Schema{}
		meta.Type = spec.StringOrArray{"object"}
		meta.Extensions = spec.Extensions{"x-kubernetes-preserve-unknown-fields": true}
		s.Properties["metadata"] = meta
		typeName := group + "." + name + "." + kind
		// Added to the root's own extensions: a root that preserves
		// unknown fields keeps doing so.
		if s.Extensions == nil {
			s.Extensions = spec.Extensions{}
		}
		s.Extensions["x-kubernetes-group-version-kind"] = []any{
			map[string]any{"group": group, "version": name, "kind": kind},
		}
		p, err := convertModels(map[string]*spec.Schema{typeName: s})
		if err != nil {
			return nil, fmt.Errorf("the schema of %s version %s: %w", crd.GetName(), name, err)
		}
		parts[schema.GroupVersion{Group: group, Version: name}] = p
	}
	return newSchema("CRD "+crd.GetName(), parts), nil
}
