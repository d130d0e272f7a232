package diff

import (
	"context"
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/conflict"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/convert"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
)

// ExtractOptions say which entries ExtractObjects extracts.
type ExtractOptions struct {
	// All extracts every entry; otherwise the one Selector picks.
	All      bool
	Selector Selector
	// ShowSecretValues keeps a Secret's values; they are redacted otherwise.
	ShowSecretValues bool
	// AtVersion reads an object at another apiVersion (the server
	// converts it). Nil: kubectl-ssa's own conversions, or the same shape
	// at the other version.
	AtVersion func(ctx context.Context, obj *unstructured.Unstructured, version string) (*unstructured.Unstructured, error)
	// Warn receives the typing warnings, once per object and version.
	Warn func(string)
}

// Extracted is one entry's apply configuration.
type Extracted struct {
	// Object is the object it was extracted from.
	Object *unstructured.Unstructured
	// Owner is the entry's manager, operation, subresource and apiVersion.
	Owner v1alpha1.Owner
	// Doc is the apply configuration: the fields the entry owns, with
	// their values, and the object's identity.
	Doc *unstructured.Unstructured
}

// ExtractObjects extracts the entries o picks of every object, typed
// through src. Of several objects, those without the selected manager
// are skipped and returned as skipped (none at all is an error); with
// All, entries that own nothing but the identity are left out.
func ExtractObjects(ctx context.Context, src conflict.Source, objs []*unstructured.Unstructured, o ExtractOptions) (out []Extracted, skipped []error, err error) {
	for _, obj := range objs {
		var entries []metav1.ManagedFieldsEntry
		if o.All {
			entries = obj.GetManagedFields()
		} else {
			e, err := FindEntry(obj, o.Selector)
			var none *NoEntryError
			if errors.As(err, &none) && len(objs) > 1 {
				skipped = append(skipped, err)
				continue
			}
			if err != nil {
				return nil, nil, err
			}
			entries = []metav1.ManagedFieldsEntry{e}
		}
		// Every entry at one apiVersion shares the object read at it, its
		// schema and its extractor: one read and one warning per version.
		extractors := map[string]*Extractor{}
		before := len(out)
		for _, e := range entries {
			if err := ctx.Err(); err != nil {
				return nil, nil, err
			}
			doc, err := o.extractOne(ctx, src, obj, e, extractors)
			if err != nil {
				return nil, nil, err
			}
			if o.All && len(doc.Object) <= 3 && len(doc.GetLabels()) == 0 && len(doc.GetAnnotations()) == 0 {
				continue // owns nothing but the identity
			}
			out = append(out, Extracted{Object: obj, Owner: ownership.OwnerOf(e), Doc: doc})
		}
		if o.All && len(out) == before {
			// Nothing printed must not read as "extracted".
			err := nothingOwned(obj)
			if len(objs) == 1 {
				return nil, nil, err
			}
			skipped = append(skipped, err)
		}
	}
	if len(objs) > 1 && len(skipped) == len(objs) {
		if o.All {
			return nil, nil, fmt.Errorf("none of the %d objects has a managedFields entry that owns a field: nothing to extract", len(objs))
		}
		return nil, nil, fmt.Errorf("none of the %d objects has a managedFields entry of manager %q", len(objs), o.Selector.Manager)
	}
	return out, skipped, nil
}

// nothingOwned is the error of --all-managers on an object none of whose
// entries owns a field.
func nothingOwned(obj *unstructured.Unstructured) error {
	name := ownership.ObjectName(obj.GetKind(), obj.GetNamespace(), obj.GetName())
	if len(obj.GetManagedFields()) == 0 {
		return &NoEntryError{Err: fmt.Errorf("%s has no managedFields (never recorded, or wiped): nothing to extract; kubectl get -o yaml shows the object itself, and an apply of its manifest records an owner again", name)}
	}
	return &NoEntryError{Err: fmt.Errorf("%s: no managedFields entry owns a field beyond the object's identity: nothing to extract", name)}
}

// extractOne reads obj at e's apiVersion when it was recorded at another,
// types it and extracts e's fields, with the extractor of that version in
// extractors (made on first use).
func (o ExtractOptions) extractOne(ctx context.Context, src conflict.Source, obj *unstructured.Unstructured, e metav1.ManagedFieldsEntry, extractors map[string]*Extractor) (*unstructured.Unstructured, error) {
	version := obj.GetAPIVersion()
	if e.APIVersion != "" {
		version = e.APIVersion
	}
	x := extractors[version]
	if x == nil {
		at := obj
		if version != obj.GetAPIVersion() {
			var err error
			if at, err = o.atVersion(ctx, obj, version); err != nil {
				return nil, err
			}
		}
		tc, warnings, err := conflict.TypeConverter(ctx, src, at, nil)
		if err != nil {
			return nil, err
		}
		if o.Warn != nil {
			for _, w := range warnings {
				o.Warn(w)
			}
		}
		x = NewExtractor(at, tc)
		extractors[version] = x
	}
	doc, err := x.Extract(e)
	if err != nil {
		return nil, err
	}
	if !o.ShowSecretValues && ownership.IsSecret(doc.GetAPIVersion(), doc.GetKind()) {
		doc.Object = ownership.RedactSecret(doc.Object)
	}
	return doc, nil
}

// atVersion reads obj at another apiVersion: through AtVersion, or
// without a server through kubectl-ssa's conversions (the same shape at
// another version otherwise).
func (o ExtractOptions) atVersion(ctx context.Context, obj *unstructured.Unstructured, version string) (*unstructured.Unstructured, error) {
	if o.AtVersion != nil {
		return o.AtVersion(ctx, obj, version)
	}
	name := ownership.ObjectName(obj.GetKind(), obj.GetNamespace(), obj.GetName())
	out, ok, err := convert.ToVersion(obj, version)
	switch {
	case err != nil:
		return nil, fmt.Errorf("%s: converting to %s: %w", name, version, err)
	case ok:
		return out, nil
	}
	out = obj.DeepCopy()
	out.SetAPIVersion(version)
	return out, nil
}
