// Package conflict predicts a server-side apply locally, exactly as the
// apiserver would run it: it drives the apiserver's own field-manager chain
// (k8s.io/apimachinery/pkg/util/managedfields) over the live object and its
// managedFields, typed by the cluster's OpenAPI v3 schema (or the schema
// compiled into client-go, offline).
//
// Simulate returns data: the conflicts with their owners and values, the
// apiserver's error message, the fields the apply removes and those it
// cannot remove because others own them, and the managedFields the server
// would store. It does not render and does not talk to a cluster; Loader
// fetches and caches schemas.
package conflict
