package v1alpha1

import (
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// GroupVersion is the apiVersion of every kubectl-ssa report: field
// names within it are stable; an incompatible change gets a new version.
const GroupVersion = "ssa.kubectl-ssa.io/v1alpha1"

// The kinds of the reports.
const (
	OwnershipReportKind = "OwnershipReport"
	ConflictReportKind  = "ConflictReport"
	DiffReportKind      = "DiffReport"
	HandoverReportKind  = "HandoverReport"
	MigrationReportKind = "MigrationReport"
	AuditReportKind     = "AuditReport"
	FightKind           = "Fight"
	VersionKind         = "Version"
)

// TypeMeta is the header of every report: its apiVersion (GroupVersion)
// and kind. Reports embed it first, so encoding/json writes these two keys
// first, inline.
type TypeMeta struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
}

// ApplyMeta names the apply a prediction is of, after TypeMeta in the
// reports of explain-conflict and diff: the object, what the apply does
// to it, and the field manager, force and subresource it is made with.
type ApplyMeta struct {
	Object       ObjectRef   `json:"object"`
	Action       Action      `json:"action"`
	FieldManager string      `json:"fieldManager"`
	Force        bool        `json:"force"`
	Subresource  Subresource `json:"subresource"`
	// Snapshot is the snapshot the prediction was read from (--snapshot).
	Snapshot *SnapshotUse `json:"snapshot,omitempty"`
}

// NewTypeMeta is the header of a report of kind.
func NewTypeMeta(kind string) TypeMeta {
	return TypeMeta{APIVersion: GroupVersion, Kind: kind}
}

// ObjectRef names an object in every report kubectl-ssa writes.
type ObjectRef struct {
	APIVersion      string `json:"apiVersion"`
	Kind            string `json:"kind"`
	Namespace       string `json:"namespace"`
	Name            string `json:"name"`
	UID             string `json:"uid"`
	ResourceVersion string `json:"resourceVersion"`
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

// Display is the object as Kind/namespace/name (Kind/name when it is
// cluster-scoped), the form every message and view uses.
func (r ObjectRef) Display() string { return ObjectName(r.Kind, r.Namespace, r.Name) }

// ObjectName formats an object as Kind/namespace/name (Kind/name when it is
// cluster-scoped).
func ObjectName(kind, namespace, name string) string {
	if namespace == "" {
		return kind + "/" + name
	}
	return kind + "/" + namespace + "/" + name
}

// Redacted stands in a report for a value it does not print (a Secret's
// data unless asked for).
const Redacted = "<redacted>"

// Operation is a managedFields entry's operation (metav1's
// ManagedFieldsOperationType, as reports write it): Apply or Update.
type Operation string

// The operations.
const (
	OperationApply  Operation = "Apply"
	OperationUpdate Operation = "Update"
)

// Subresource is the subresource a write went to, as managedFields records
// it: "" for the object itself, "status", "scale".
type Subresource string

// The subresources whose writers kubectl-ssa tells apart.
const (
	SubresourceNone   Subresource = ""
	SubresourceStatus Subresource = "status"
	SubresourceScale  Subresource = "scale"
)

// Owner identifies one managedFields entry: the manager name with operation,
// subresource and (for Update) apiVersion is the manager's identity. Time is
// the entry's time, i.e. that manager's last write to the object, not the
// time the field changed; nil where the entry has none.
type Owner struct {
	Manager     string       `json:"manager"`
	Operation   Operation    `json:"operation"`
	Subresource Subresource  `json:"subresource"`
	APIVersion  string       `json:"apiVersion"`
	Time        *metav1.Time `json:"time"`
}

// Identity is what SameOwners compares an owner by: its manager,
// operation and subresource, not its time or apiVersion.
func (o Owner) Identity() string {
	return o.Manager + "\x00" + string(o.Operation) + "\x00" + string(o.Subresource)
}

// SameOwners compares owners by identity (manager, operation,
// subresource), in any order, not by time or apiVersion.
func SameOwners(a, b []Owner) bool {
	if len(a) != len(b) {
		return false
	}
	same := true // in the same order, as most are: no multiset to build
	for i := range a {
		same = same && a[i].Manager == b[i].Manager && a[i].Operation == b[i].Operation && a[i].Subresource == b[i].Subresource
	}
	if same {
		return true
	}
	seen := map[string]int{}
	for _, o := range a {
		seen[o.Identity()]++
	}
	for _, o := range b {
		if seen[o.Identity()] == 0 {
			return false
		}
		seen[o.Identity()]--
	}
	return true
}
