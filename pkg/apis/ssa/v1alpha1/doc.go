// Package v1alpha1 holds every report kubectl-ssa prints with -o json and
// -o yaml (apiVersion ssa.kubectl-ssa.io/v1alpha1), their parts and the
// typed values of their fields: the one place a report's shape is defined.
// The engines of pkg/ compute these values; pkg/render prints them;
// hack/jsonschema writes their JSON Schema into docs/schema (make schemas).
//
// It imports no engine: only apimachinery's and structured-merge-diff's
// types and the foundations the reports are made of (pkg/pathlang's paths,
// pkg/remedy's fixes).
//
// Versioning: within v1alpha1 the JSON names and meanings of fields are
// stable; fields may be added, never renamed, removed or given another
// meaning. An incompatible change gets a new version (v1alpha2, v1beta1)
// beside this one. Fields tagged json:"-" are not part of the report: they
// carry what an engine computed to the views, and may change at any time.
package v1alpha1
