package conflict

import (
	"errors"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// versionConverter converts unstructured objects between the versions of
// a kind by changing apiVersion, which is what the apiserver does for
// custom resources without a conversion webhook. For built-in kinds whose
// versions differ in shape the result is approximate (--verify shows it).
// Versions outside served are reported as not registered: the field
// manager then drops their managers, as the apiserver drops managers of
// versions it no longer serves.
type versionConverter struct {
	served func(schema.GroupVersionKind) bool
	// types, when set, checks the converted object against the target
	// version's schema: a built-in kind whose versions differ in shape
	// can't be converted here, so that version is treated as missing (its
	// managers are not compared) and noted in unconverted.
	types       managedfields.TypeConverter
	unconverted map[string]bool
}

var _ runtime.ObjectConvertor = versionConverter{}

func (c versionConverter) Convert(in, out, context interface{}) error {
	return errors.New("kubectl-ssa: Convert is not supported")
}

func (c versionConverter) ConvertToVersion(in runtime.Object, target runtime.GroupVersioner) (runtime.Object, error) {
	u, ok := in.(*unstructured.Unstructured)
	if !ok {
		return nil, errors.New("kubectl-ssa: only unstructured objects convert")
	}
	gvk := u.GroupVersionKind()
	to, ok := target.KindForGroupVersionKinds([]schema.GroupVersionKind{gvk})
	if !ok {
		return nil, runtime.NewNotRegisteredErrForKind("kubectl-ssa", gvk)
	}
	if to == gvk {
		return u, nil
	}
	if c.served != nil && !c.served(to) {
		return nil, runtime.NewNotRegisteredErrForKind("kubectl-ssa", to)
	}
	out := u.DeepCopy()
	out.SetGroupVersionKind(to)
	if c.types != nil {
		if _, err := c.types.ObjectToTyped(out); err != nil {
			if c.unconverted != nil {
				c.unconverted[to.GroupVersion().String()] = true
			}
			return nil, runtime.NewNotRegisteredErrForKind("kubectl-ssa (needs the apiserver's conversion)", to)
		}
	}
	return out, nil
}

func (c versionConverter) ConvertFieldLabel(gvk schema.GroupVersionKind, label, value string) (string, string, error) {
	return label, value, nil
}

// nopDefaulter: defaulting of built-in types lives in the apiserver; the
// simulation leaves defaults out, so a field the apply removes may come
// back as its default (reports say so).
type nopDefaulter struct{}

func (nopDefaulter) Default(runtime.Object) {}

// objectCreator makes the empty object the field manager starts from (for
// before-first-apply). The apiserver uses the typed zero value of a
// built-in kind, whose empty structs (spec, spec.template, ...) are then
// not counted as set; custom resources start from an empty map.
type objectCreator struct{}

func (objectCreator) New(kind schema.GroupVersionKind) (runtime.Object, error) {
	u := &unstructured.Unstructured{Object: map[string]interface{}{}}
	if scheme.Scheme.Recognizes(kind) {
		if typed, err := scheme.Scheme.New(kind); err == nil {
			if m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(typed); err == nil {
				u.Object = m
			}
		}
	}
	u.SetGroupVersionKind(kind)
	return u, nil
}

// ResetFields returns the fields the apiserver resets (and so never
// records as owned) for writes to a subresource of a kind: the main
// resource resets status when the kind has a status subresource, and the
// status subresource resets spec (plus, for a few built-in kinds, some
// metadata). versions are the group-versions the filter applies to.
func ResetFields(gvk schema.GroupVersionKind, subresource string, hasStatus bool, versions []schema.GroupVersion) map[fieldpath.APIVersion]fieldpath.Filter {
	var set *fieldpath.Set
	switch subresource {
	case "":
		if hasStatus {
			set = fieldpath.NewSet(fieldpath.MakePathOrDie("status"))
		}
	case "status":
		set = fieldpath.NewSet(fieldpath.MakePathOrDie("spec"))
		switch gvk.GroupKind() {
		case schema.GroupKind{Group: "apps", Kind: "Deployment"}:
			set.Insert(fieldpath.MakePathOrDie("metadata", "labels"))
		case schema.GroupKind{Kind: "Pod"}:
			set.Insert(fieldpath.MakePathOrDie("metadata", "deletionTimestamp"))
			set.Insert(fieldpath.MakePathOrDie("metadata", "ownerReferences"))
		}
	}
	if set == nil {
		return nil
	}
	out := map[fieldpath.APIVersion]fieldpath.Filter{}
	for _, gv := range append([]schema.GroupVersion{gvk.GroupVersion()}, versions...) {
		out[fieldpath.APIVersion(gv.String())] = fieldpath.NewExcludeSetFilter(set)
	}
	return out
}
