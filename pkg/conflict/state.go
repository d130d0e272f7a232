package conflict

import (
	"context"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/admission"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
)

// State is everything one apply's prediction reads, read beforehand (by
// ReadState, or by a cluster's reader that reads it side by side): Predict
// is a function of it and of the Options alone.
type State struct {
	// Manifest is the manifest as given; Applied the apply's body as the
	// server reads it (its namespace defaulted), which the prediction
	// reads; Sent a copy of it, which nothing changes (the report's
	// applied object, what --verify sends).
	Manifest, Applied, Sent *unstructured.Unstructured
	// Rewritten: reading the body rewrote it (ApplyBody).
	Rewritten bool
	// Target is what the source knows of the object.
	Target *Target
	// Schema types the kind (TypeConverter), with what it says of it.
	Schema         managedfields.TypeConverter
	SchemaWarnings []string
	// ScaleSchema types the Scale of /scale (read for --subresource scale).
	ScaleSchema managedfields.TypeConverter
	// Served tells whether a kind is served at a version (nil: all).
	Served func(schema.GroupVersionKind) bool
	// Autoscalers are the live HPAs that target the object
	// (AutoscalersOf), AutoscalersWarning why they could not be listed.
	Autoscalers        []v1alpha1.Autoscaler
	AutoscalersWarning string
	// AdmissionRead: the cluster's admission was read (false offline:
	// the report says it is not evaluated); Admission is its
	// configuration (nil: none to evaluate) and AdmissionRequest how the
	// object's request is matched.
	AdmissionRead    bool
	Admission        *admission.Config
	AdmissionRequest admission.Request
}

// ReadState reads, one after the other, what the prediction of the apply
// of manifest (as o) needs from a source that answers without a round trip
// (the saved files of --local, a test's source): its admission is not
// read. A cluster's reader reads the same side by side (internal/source).
func ReadState(ctx context.Context, src Source, manifest *unstructured.Unstructured, o Options) (st *State, err error) {
	defer func() { err = SecretError(manifest, err) }()
	st = &State{Manifest: manifest, Served: src.Served()}
	if st.Applied, st.Rewritten, err = ApplyBody(manifest.DeepCopy()); err != nil {
		return nil, err
	}
	if st.Target, err = src.Target(ctx, st.Applied); err != nil {
		return nil, err
	}
	st.Sent = st.Applied.DeepCopy()
	st.Autoscalers, st.AutoscalersWarning = AutoscalersOf(ctx, src, st.Sent)
	if err := ReadSchemas(ctx, src, st, o); err != nil {
		return nil, err
	}
	return st, nil
}

// ReadSchemas reads the schemas of st's apply, once its Target is read:
// the kind's (TypeConverter) and, for /scale, the Scale's.
func ReadSchemas(ctx context.Context, src Source, st *State, o Options) error {
	tc, warnings, err := TypeConverter(ctx, src, st.Applied, st.Target.Live)
	if err != nil {
		return err
	}
	st.Schema, st.SchemaWarnings = tc, warnings
	if o.Subresource == string(v1alpha1.SubresourceScale) {
		if st.ScaleSchema, err = src.ScaleSchema(ctx, st.Applied.GroupVersionKind()); err != nil {
			return err
		}
	}
	return nil
}

// SecretError hides the values a Secret's validation error quotes; other
// manifests' errors are returned as they are.
func SecretError(manifest *unstructured.Unstructured, err error) error {
	if err == nil || !ownership.IsSecret(manifest.GetAPIVersion(), manifest.GetKind()) {
		return err
	}
	if _, ok := err.(redactedError); ok { //nolint:errorlint // only this layer wraps it
		return err
	}
	return redactedError{err}
}

// Explain reads (ReadState) and predicts (Predict) the apply of one
// manifest against a source that answers without a round trip: saved
// files, a test's objects. Against a cluster, read with its reader
// (internal/source), then Predict, then Verify.
func Explain(ctx context.Context, src Source, manifest *unstructured.Unstructured, o Options) (*Simulation, error) {
	st, err := ReadState(ctx, src, manifest, o)
	if err != nil {
		return nil, err
	}
	return Predict(st, o)
}
