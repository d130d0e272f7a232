// Package conflict predicts a server-side apply locally, exactly as the
// apiserver would run it: it drives the apiserver's own field-manager chain
// (k8s.io/apimachinery/pkg/util/managedfields) over the live object and its
// managedFields, typed by the cluster's OpenAPI v3 schema (or the schema
// compiled into client-go, offline).
//
// Simulate returns a Simulation: its Report is data (the conflicts with
// their owners and values, the apiserver's error message, the fields the
// apply removes and those it cannot remove because others own them, and
// the managedFields the server would store); beside it, the objects before
// and after and the schema and defaults they were typed with, for diff and
// the views. It does not render and does not talk to a cluster; Loader
// fetches and caches schemas.
//
// An apply is read, predicted and verified in three steps: a State holds
// everything its prediction reads (the live object, the schemas, the
// autoscalers, admission), read by internal/source's Reader side by side
// (or by ReadState from saved files); Predict is a function of the State
// and the Options alone; Verify sends the apply as a server dry run and
// compares, reading and predicting again when a writer came in between.
//
// Each conflict says what its owner most likely is (Likely), from
// pkg/tools' catalogue of field managers; Resolutions writes the ways
// out, for kubectl and in the applier's own terms (an Argo CD
// Application's ignoreDifferences, a Flux ignore rule, a Helm chart
// change), as remedy data.
package conflict
