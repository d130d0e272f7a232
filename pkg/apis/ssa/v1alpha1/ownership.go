package v1alpha1

import (
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/pathlang"
)

// Manager is one managedFields entry and how many fields it owns.
type Manager struct {
	Owner
	FieldCount int `json:"fieldCount"`

	// Set is the decoded FieldsV1 of the entry.
	Set *fieldpath.Set `json:"-"`
}

// Field is one owned path of the object.
type Field struct {
	// Path marshals to the apiserver's path string, e.g.
	// .spec.template.spec.containers[name="nginx"].image.
	Path   pathlang.Path `json:"path"`
	Owners []Owner       `json:"owners"`
	// Value is the field's current value where it is a scalar, or a whole
	// atomic value; absent for granular maps, structs and list items.
	Value any `json:"value,omitempty"`

	// Absent marks a path a manager owns that the object does not have
	// (stale managedFields, or a field the apiserver drops).
	Absent bool `json:"absent,omitempty"`
	// HasValue tells a JSON null value from no value.
	HasValue bool `json:"-"`
	// Redacted is set when Value was hidden (Secret data).
	Redacted bool `json:"-"`
}

// OwnershipReport is the ownership of one object (who-owns).
type OwnershipReport struct {
	TypeMeta
	Object   ObjectRef `json:"object"`
	Managers []Manager `json:"managers"`
	Fields   []Field   `json:"fields"`
	// Unowned lists the top-most paths present in the object that no
	// manager owns (defaulted fields, fields written before managedFields
	// existed or after they were reset). Identity and server-managed
	// metadata (name, uid, resourceVersion, ...) are never owned and are
	// not listed.
	Unowned []pathlang.Path `json:"unowned"`
}
