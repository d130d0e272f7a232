// Package scenario builds objects for unit tests the way the apiserver
// does: every Apply and Update runs through the apiserver's own field
// manager (managedfields.NewDefaultFieldManager) over the built-in
// schema, so managedFields are what a real server would store, not
// FieldsV1 written by hand. Times are the field manager's (tests ignore
// them). Only tests import it.
package scenario

import (
	"errors"
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/conflict"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/convert"
)

// Converter converts as the apiserver does: the kinds
// pkg/convert knows with their conversion, the others by changing
// apiVersion, as the apiserver does for kinds without conversion.
type Converter struct{}

func (Converter) Convert(in, out, context any) error {
	return errors.New("Convert is not supported")
}

func (Converter) ConvertToVersion(in runtime.Object, target runtime.GroupVersioner) (runtime.Object, error) {
	u, ok := in.(*unstructured.Unstructured)
	if !ok {
		return nil, fmt.Errorf("only unstructured objects convert, not %T", in)
	}
	to, ok := target.KindForGroupVersionKinds([]schema.GroupVersionKind{u.GroupVersionKind()})
	if !ok {
		return nil, runtime.NewNotRegisteredErrForKind("test", u.GroupVersionKind())
	}
	if out, ok, err := convert.ToVersion(u, to.Version); ok {
		return out, err
	}
	out := u.DeepCopy()
	out.SetGroupVersionKind(to)
	return out, nil
}

func (Converter) ConvertFieldLabel(gvk schema.GroupVersionKind, label, value string) (string, string, error) {
	return label, value, nil
}

// NopDefaulter defaults nothing.
type NopDefaulter struct{}

func (NopDefaulter) Default(runtime.Object) {}

// ZeroCreater creates what the apiserver's runtime.ObjectCreater does, as an
// unstructured object: the kind's typed zero value, whose unstructured form
// holds empty structs (spec: {template: {...}}, status: {}).
type ZeroCreater struct{}

func (ZeroCreater) New(gvk schema.GroupVersionKind) (runtime.Object, error) {
	typed, err := scheme.Scheme.New(gvk)
	if err != nil {
		return nil, err
	}
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(typed)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: content}
	u.SetGroupVersionKind(gvk)
	return u, nil
}

// FieldManager is the apiserver's field manager of a built-in kind, for
// the main resource ("") or a subresource.
func FieldManager(t testing.TB, gvk schema.GroupVersionKind, subresource string) *managedfields.FieldManager {
	t.Helper()
	reset := conflict.ResetFields(gvk, subresource, true, nil)
	fm, err := managedfields.NewDefaultFieldManager(conflict.BuiltinSchema(), Converter{}, NopDefaulter{}, ZeroCreater{}, gvk, gvk.GroupVersion(), subresource, reset)
	if err != nil {
		t.Fatal(err)
	}
	return fm
}

// Manifest reads a YAML or JSON manifest.
func Manifest(t testing.TB, s string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(s), &u.Object); err != nil {
		t.Fatalf("manifest: %v\n%s", err, s)
	}
	return u
}

// State is the object as the server holds it; Live is nil before it
// exists.
type State struct{ Live *unstructured.Unstructured }

// Run runs the operations in order.
func (s *State) Run(t testing.TB, ops ...Op) *State {
	t.Helper()
	for _, op := range ops {
		op.Run(t, s)
	}
	return s
}

// Base is what the server starts a create from: the kind's typed zero
// value (whose unstructured form has spec: {template: {...}}, status: {}),
// named, without a uid.
func (s *State) Base(t testing.TB, obj *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	if s.Live != nil {
		return s.Live.DeepCopy()
	}
	zero, err := ZeroCreater{}.New(obj.GroupVersionKind())
	if err != nil {
		t.Fatal(err)
	}
	u := zero.(*unstructured.Unstructured)
	u.SetName(obj.GetName())
	u.SetNamespace(obj.GetNamespace())
	return u
}

// Store keeps obj, the field manager's answer, as the live object.
func (s *State) Store(t testing.TB, obj runtime.Object) {
	t.Helper()
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		t.Fatalf("field manager returned %T", obj)
	}
	if u.GetUID() == "" {
		u.SetUID(types.UID("6c8d7e2a-0000-4000-8000-000000000001"))
	}
	s.Live = u
}

// Op is one write to the object.
type Op interface {
	Run(t testing.TB, s *State)
}

// Apply is a server-side apply of a manifest.
type Apply struct {
	Manager  string
	Manifest string
	Force    bool
}

// Run applies.
func (a Apply) Run(t testing.TB, s *State) {
	t.Helper()
	obj := Manifest(t, a.Manifest)
	out, err := FieldManager(t, obj.GroupVersionKind(), "").Apply(s.Base(t, obj), obj, a.Manager, a.Force)
	if err != nil {
		t.Fatalf("setup: apply by %s: %v", a.Manager, err)
	}
	s.Store(t, out)
}

// Update is a non-apply write (create, update or patch) of the whole
// object by a manager, optionally through a subresource. Create is the
// full object to create; otherwise Mutate changes a copy of the live one.
type Update struct {
	Manager     string
	Subresource string
	Create      string
	Mutate      func(u *unstructured.Unstructured)
}

// Run updates.
func (o Update) Run(t testing.TB, s *State) {
	t.Helper()
	var obj *unstructured.Unstructured
	if o.Create != "" {
		obj = Manifest(t, o.Create)
	} else {
		obj = s.Live.DeepCopy()
		o.Mutate(obj)
	}
	out, err := FieldManager(t, obj.GroupVersionKind(), o.Subresource).Update(s.Base(t, obj), obj, o.Manager)
	if err != nil {
		t.Fatalf("setup: update by %s: %v", o.Manager, err)
	}
	s.Store(t, out)
}

// Set is a Mutate that sets a field.
func Set(value any, path ...string) func(*unstructured.Unstructured) {
	return func(u *unstructured.Unstructured) {
		if err := unstructured.SetNestedField(u.Object, value, path...); err != nil {
			panic(err)
		}
	}
}

// ResetManagedFields is the documented way to clear managedFields: an
// update that sets them to [{}].
func ResetManagedFields(u *unstructured.Unstructured) {
	u.SetManagedFields([]metav1.ManagedFieldsEntry{{}})
}
