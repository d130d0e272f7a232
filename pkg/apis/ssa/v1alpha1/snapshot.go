package v1alpha1

import (
	"encoding/json"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apimachineryversion "k8s.io/apimachinery/pkg/version"
)

// SnapshotKind is the kind of the file kubectl ssa snapshot writes.
const SnapshotKind = "Snapshot"

// SecretHashPrefix starts every value a snapshot stores in place of a
// Secret's: the value's HMAC-SHA256 under the snapshot's salt, in hex.
const SecretHashPrefix = "hmac-sha256:"

// Snapshot is what kubectl ssa snapshot writes (gzip-compressed JSON):
// the objects selected, with their managedFields and resourceVersion, and
// everything the prediction of an apply to them reads from the cluster,
// so explain-conflict and diff --snapshot predict with no cluster. Every
// list is sorted; a Secret's values are salted hashes (see Salt).
type Snapshot struct {
	TypeMeta
	// TakenAt is when the snapshot was taken (its lists started).
	TakenAt metav1.Time `json:"takenAt"`
	// ServerVersion is the server's /version.
	ServerVersion apimachineryversion.Info `json:"serverVersion"`
	// Selection is what was asked for.
	Selection SnapshotSelection `json:"selection"`
	// Salt (hex) keys the HMAC-SHA256 that stands in for each value of a
	// Secret's data (and its last-applied-configuration annotation): the
	// same value under the same salt has the same hash, so a manifest's
	// Secret is compared with the stored one without the value stored.
	Salt string `json:"salt"`
	// Discovery holds the server's aggregated discovery documents
	// (apidiscovery.k8s.io/v2 APIGroupDiscoveryList), by path: "/api"
	// and "/apis".
	Discovery map[string]json.RawMessage `json:"discovery"`
	// OpenAPI holds the server's OpenAPI v3 documents of the
	// group-versions used, by their path in /openapi/v3 ("api/v1",
	// "apis/apps/v1").
	OpenAPI map[string]json.RawMessage `json:"openapi"`
	// Lists are the lists made, with the objects they found: an object a
	// list covers and its items lack did not exist; one no list covers is
	// not known (reading it is an error).
	Lists []SnapshotList `json:"lists"`
}

// SnapshotSelection is the selection a snapshot was taken with.
type SnapshotSelection struct {
	// Resources are the resources selected (resource.version.group).
	Resources     []string `json:"resources"`
	Namespace     string   `json:"namespace,omitempty"`
	AllNamespaces bool     `json:"allNamespaces,omitempty"`
	LabelSelector string   `json:"labelSelector,omitempty"`
}

// SnapshotList is one list a snapshot made: a resource at a version, in
// a namespace ("": all namespaces, or cluster-scoped), with a label
// selector ("": every object).
type SnapshotList struct {
	Group         string `json:"group"`
	Version       string `json:"version"`
	Resource      string `json:"resource"`
	Namespace     string `json:"namespace,omitempty"`
	LabelSelector string `json:"labelSelector,omitempty"`
	// Refused is the server's message when it refused the list (RBAC):
	// reading it from the snapshot is refused the same way.
	Refused string `json:"refused,omitempty"`
	// Items are the objects found, whole (managedFields and
	// resourceVersion included), by namespace and name.
	Items []map[string]any `json:"items"`
}

// SnapshotUse is the snapshot a prediction was read from, in the reports
// of explain-conflict and diff --snapshot.
type SnapshotUse struct {
	TakenAt metav1.Time `json:"takenAt"`
	// AgeSeconds is how old the snapshot was when the prediction was made.
	AgeSeconds int64 `json:"ageSeconds"`
	// ServerVersion is the server's gitVersion when it was taken.
	ServerVersion string `json:"serverVersion"`
	// ChangedSince, with --verify, tells whether the live object's
	// resourceVersion differs from the snapshot's (or it was created or
	// deleted since).
	ChangedSince *bool `json:"changedSince,omitempty"`
}
