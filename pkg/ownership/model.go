package ownership

import (
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/pathlang"
)

// ReportKind is the kind of the report Analyze returns.
const ReportKind = "OwnershipReport"

// ReportAPIVersion is the apiVersion of every kubectl-ssa report: field
// names within it are stable; an incompatible change gets a new version.
const ReportAPIVersion = "ssa.kubectl-ssa.io/v1alpha1"

// ObjectRef names an object in every report kubectl-ssa writes.
type ObjectRef struct {
	APIVersion      string `json:"apiVersion"`
	Kind            string `json:"kind"`
	Namespace       string `json:"namespace"`
	Name            string `json:"name"`
	UID             string `json:"uid"`
	ResourceVersion string `json:"resourceVersion"`
}

// Owner identifies one managedFields entry: the manager name with operation,
// subresource and (for Update) apiVersion is the manager's identity. Time is
// the entry's time, i.e. that manager's last write to the object, not the
// time the field changed; nil where the entry has none.
type Owner struct {
	Manager     string       `json:"manager"`
	Operation   string       `json:"operation"`
	Subresource string       `json:"subresource"`
	APIVersion  string       `json:"apiVersion"`
	Time        *metav1.Time `json:"time"`
}

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
	Value interface{} `json:"value,omitempty"`

	// Absent marks a path a manager owns that the object does not have
	// (stale managedFields, or a field the apiserver drops).
	Absent bool `json:"absent,omitempty"`
	// HasValue tells a JSON null value from no value.
	HasValue bool `json:"-"`
	// Redacted is set when Value was hidden (Secret data).
	Redacted bool `json:"-"`
}

// Report is the ownership of one object.
type Report struct {
	APIVersion string    `json:"apiVersion"`
	Kind       string    `json:"kind"`
	Object     ObjectRef `json:"object"`
	Managers   []Manager `json:"managers"`
	Fields     []Field   `json:"fields"`
	// Unowned lists the top-most paths present in the object that no
	// manager owns (defaulted fields, fields written before managedFields
	// existed or after they were reset). Identity and server-managed
	// metadata (name, uid, resourceVersion, ...) are never owned and are
	// not listed.
	Unowned []pathlang.Path `json:"unowned"`

	// Filtered is set on the copies Filter.Apply returns for a filter
	// that selects something less than everything: views that show the
	// whole object (blame, tree) show only what Fields and Unowned hold.
	Filtered bool `json:"-"`

	// Entries is the number of managedFields entries of the object;
	// Managers holds fewer when a filter left some out.
	Entries int `json:"-"`
	// Owners are the identities of every entry, in managedFields order:
	// Tree's owner indices point here, whatever a filter removed from
	// Managers.
	Owners []Owner `json:"-"`

	// Tree is the ownership trie the views walk; Content is the object
	// without managedFields, with secret values redacted unless asked for.
	// Content shares the values Analyze did not change with the object
	// analyzed: both are read-only.
	Tree    *Node                  `json:"-"`
	Content map[string]interface{} `json:"-"`
}

// Node is a node of the ownership trie: a path element, the indices (into
// Report.Managers) of the managers whose sets hold this exact path, and the
// children that hold owned paths below it.
type Node struct {
	PE       fieldpath.PathElement
	Path     fieldpath.Path
	Owners   []int
	Children []*Node
	// fields indexes children by field name, others by the serialized
	// path element.
	fields map[string]*Node
	others map[string]*Node
}

// ResourceArg is the argument that names the object to kubectl and
// kubectl-ssa exactly: kind.version.group/name (kind/name in the core
// group), which no other group's kind of that name can shadow.
func (r ObjectRef) ResourceArg() string {
	k := strings.ToLower(r.Kind)
	if group, version, ok := strings.Cut(r.APIVersion, "/"); ok {
		k += "." + version + "." + group
	}
	return k + "/" + r.Name
}
