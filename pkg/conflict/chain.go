package conflict

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/convert"
)

// versionConverter converts objects between the versions of a kind as
// the apiserver does: built-in kinds whose versions differ in shape with
// their own conversion (pkg/convert); custom resources, and built-in kinds
// whose versions have one shape, by changing apiVersion, which is what the
// apiserver does for custom resources without a conversion webhook (those
// with one can't be converted here).
// Versions outside served are reported as not registered: the field
// manager then drops their managers, as the apiserver drops managers of
// versions it no longer serves.
type versionConverter struct {
	served func(schema.GroupVersionKind) bool
	// types, set for built-in kinds, checks an object whose apiVersion was
	// changed against the target version's schema: if it does not fit,
	// the versions differ in shape and only the apiserver can convert.
	types managedfields.TypeConverter
	// webhook: a custom resource whose versions a webhook converts.
	webhook bool
	// failed collects the conversions that could not be done. The field
	// manager is told the version is missing (so it goes on), and the
	// caller must not trust its answer.
	failed failedConversions
}

// failedConversions are the target versions the converter could not
// convert to, with the first error of each (nil: no converter).
type failedConversions map[schema.GroupVersionKind]error

func (f failedConversions) add(to schema.GroupVersionKind, err error) {
	if _, ok := f[to]; !ok {
		f[to] = err
	}
}

var _ runtime.ObjectConvertor = versionConverter{}

func (c versionConverter) Convert(in, out, context any) error {
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
	if c.types != nil && to.GroupKind() == gvk.GroupKind() && convert.Handles(gvk.GroupKind(), gvk.Version, to.Version) {
		out, _, err := convert.ToVersion(u, to.Version)
		if err != nil {
			c.fail(to, err)
			return nil, runtime.NewNotRegisteredErrForKind("kubectl-ssa (conversion failed)", to)
		}
		return out, nil
	}
	if c.webhook {
		c.fail(to, errors.New("a conversion webhook converts it"))
		return nil, runtime.NewNotRegisteredErrForKind("kubectl-ssa (needs the conversion webhook)", to)
	}
	out := u.DeepCopy()
	out.SetGroupVersionKind(to)
	if c.types != nil {
		if _, err := c.types.ObjectToTyped(out); err != nil {
			c.fail(to, nil)
			return nil, runtime.NewNotRegisteredErrForKind("kubectl-ssa (needs the apiserver's conversion)", to)
		}
	}
	return out, nil
}

func (c versionConverter) fail(to schema.GroupVersionKind, err error) {
	if c.failed != nil {
		c.failed.add(to, err)
	}
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
// not counted as set; custom resources start from an empty map. The zero
// value is client-go's: a field the server's schema lacks (an older
// server's kind, without a status this version added) is left out.
type objectCreator struct{ tc managedfields.TypeConverter }

func (c objectCreator) New(kind schema.GroupVersionKind) (runtime.Object, error) {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	if scheme.Scheme.Recognizes(kind) {
		if typed, err := scheme.Scheme.New(kind); err == nil {
			if m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(typed); err == nil {
				u.Object = m
			}
		}
	}
	u.SetGroupVersionKind(kind)
	if c.tc != nil {
		DeclaredOnly(c.tc, u, slices.Sorted(maps.Keys(u.Object)))
	}
	return u, nil
}

// DeclaredOnly drops those of the top-level fields keys of u that tc's
// schema does not declare: what client-go's Go type, newer than an older
// server's, adds to an object (a status the server's version lacks). Each
// is typed alone, in an object of its own.
func DeclaredOnly(tc managedfields.TypeConverter, u *unstructured.Unstructured, keys []string) {
	for _, k := range keys {
		switch k {
		case "apiVersion", "kind", "metadata":
			continue
		}
		probe := &unstructured.Unstructured{Object: map[string]any{"apiVersion": u.Object["apiVersion"], "kind": u.Object["kind"], k: u.Object[k]}}
		if _, err := tc.ObjectToTyped(probe); err != nil {
			delete(u.Object, k)
		}
	}
}

// ResetFields returns the fields the apiserver resets (and so never
// records as owned) for writes to a subresource of a kind: the main
// resource resets status when the kind has a status subresource, and the
// status subresource resets spec (plus, for some built-in kinds, some or
// all of metadata). versions are the group-versions the filter applies
// to. The table is the apiserver's strategies' GetResetFields
// (pkg/registry/*/*/strategy.go).
func ResetFields(gvk schema.GroupVersionKind, subresource string, hasStatus bool, versions []schema.GroupVersion) map[fieldpath.APIVersion]fieldpath.Filter {
	set := resetSet(gvk.GroupKind(), subresource, hasStatus)
	if set == nil {
		return nil
	}
	out := map[fieldpath.APIVersion]fieldpath.Filter{}
	for _, gv := range append([]schema.GroupVersion{gvk.GroupVersion()}, versions...) {
		out[fieldpath.APIVersion(gv.String())] = fieldpath.NewExcludeSetFilter(set)
	}
	return out
}

// resetSet is the set ResetFields filters out.
func resetSet(gk schema.GroupKind, subresource string, hasStatus bool) *fieldpath.Set {
	path := fieldpath.MakePathOrDie
	switch subresource {
	case "":
		if gk == csrKind {
			// A CSR's spec is set on create only, from the request and
			// the requesting user; applies never own it.
			return fieldpath.NewSet(path("spec"), path("status"))
		}
		if hasStatus {
			return fieldpath.NewSet(path("status"))
		}
	case "status":
		set := fieldpath.NewSet(path("spec"))
		switch {
		case gk == schema.GroupKind{Group: "apps", Kind: "Deployment"}:
			set.Insert(path("metadata", "labels"))
		case gk == schema.GroupKind{Kind: "Pod"}:
			set.Insert(path("metadata", "deletionTimestamp"))
			set.Insert(path("metadata", "ownerReferences"))
		case gk == csrKind:
			set.Insert(path("status", "conditions"))
		case statusResetsMetadata[gk]:
			set.Insert(path("metadata"))
		}
		return set
	case "approval":
		if gk == csrKind {
			return fieldpath.NewSet(path("spec"), path("status", "certificate"))
		}
	}
	return nil
}

var csrKind = schema.GroupKind{Group: "certificates.k8s.io", Kind: "CertificateSigningRequest"}

// statusResetsMetadata are the kinds whose status strategy resets all of
// metadata, not only spec.
var statusResetsMetadata = map[schema.GroupKind]bool{
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingAdmissionPolicy"}:  true,
	{Group: "certificates.k8s.io", Kind: "PodCertificateRequest"}:               true,
	{Group: "flowcontrol.apiserver.k8s.io", Kind: "FlowSchema"}:                 true,
	{Group: "flowcontrol.apiserver.k8s.io", Kind: "PriorityLevelConfiguration"}: true,
	{Group: "internal.apiserver.k8s.io", Kind: "StorageVersion"}:                true,
	{Group: "networking.k8s.io", Kind: "ServiceCIDR"}:                           true,
	{Group: "resource.k8s.io", Kind: "DeviceTaintRule"}:                         true,
	{Group: "resource.k8s.io", Kind: "ResourceClaim"}:                           true,
	{Group: "resource.k8s.io", Kind: "ResourcePoolStatusRequest"}:               true,
	{Group: "scheduling.k8s.io", Kind: "PodGroup"}:                              true,
	{Group: "scheduling.k8s.io", Kind: "CompositePodGroup"}:                     true,
	{Group: "storage.k8s.io", Kind: "VolumeAttachment"}:                         true,
	{Group: "storagemigration.k8s.io", Kind: "StorageVersionMigration"}:         true,
}

// UnconvertibleError says an apply can't be predicted: managers recorded
// at another version of a built-in kind are compared by the apiserver at
// their version, and kubectl-ssa can't convert the kind between the two
// versions (only the apiserver can). Guessing would be worse than no
// answer: a missed conflict looks like a clean apply.
type UnconvertibleError struct {
	// Object is Kind/namespace/name.
	Object string
	Kind   schema.GroupKind
	// From is the applied version; To are the versions it could not be
	// converted to, sorted.
	From string
	To   []string
	// Managers recorded fields at the versions in To.
	Managers []string
	// Err is why a registered conversion failed; nil when there is none.
	Err error
}

func (e *UnconvertibleError) Error() string {
	kind := e.Kind.Kind
	if e.Kind.Group != "" {
		kind += "." + e.Kind.Group
	}
	gv := func(v string) string { return schema.GroupVersion{Group: e.Kind.Group, Version: v}.String() }
	to := make([]string, len(e.To))
	for i, v := range e.To {
		to[i] = gv(v)
	}
	managers := make([]string, len(e.Managers))
	for i, m := range e.Managers {
		managers[i] = strconv.Quote(m)
	}
	why := "only the apiserver can"
	if e.Err != nil {
		why = e.Err.Error()
	}
	return fmt.Sprintf("%s: can't predict this apply: %s recorded fields at %s, which the apiserver compares there, and kubectl-ssa can't convert %s from %s to it (%s): ask the apiserver with kubectl apply --server-side --dry-run=server",
		e.Object, strings.Join(managers, ", "), strings.Join(to, ", "), kind, gv(e.From), why)
}

func (e *UnconvertibleError) Unwrap() error { return e.Err }
