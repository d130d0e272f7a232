package conflict_test

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/admission"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/conflict"
)

// verifiedSource is a test's source that dry-runs applies too.
type verifiedSource interface {
	conflict.Source
	DryRunApply(ctx context.Context, obj, body *unstructured.Unstructured, o metav1.ApplyOptions, subresource string) (*unstructured.Unstructured, error)
}

// explainVerified reads, predicts and verifies the apply of manifest as
// a command does: the read as a cluster's reader makes it (admission
// too, when the source reads it), one after the other.
func explainVerified(ctx context.Context, src verifiedSource, manifest *unstructured.Unstructured, o conflict.Options) (*conflict.Simulation, error) {
	read := func(ctx context.Context) (*conflict.State, error) {
		st, err := conflict.ReadState(ctx, src, manifest, o)
		if err != nil {
			return nil, err
		}
		if a, ok := src.(interface {
			Admission(context.Context, *unstructured.Unstructured) (*admission.Config, admission.Request, error)
		}); ok {
			st.AdmissionRead = true
			if st.Admission, st.AdmissionRequest, err = a.Admission(ctx, st.Sent); err != nil {
				return nil, err
			}
		}
		return st, nil
	}
	st, err := read(ctx)
	if err != nil {
		return nil, err
	}
	r, err := conflict.Predict(st, o)
	if err != nil {
		return nil, err
	}
	server := conflict.Server{Apply: func(ctx context.Context, obj, body *unstructured.Unstructured, o metav1.ApplyOptions, subresource string) (*unstructured.Unstructured, []string, error) {
		out, err := src.DryRunApply(ctx, obj, body, o, subresource)
		return out, nil, err
	}}
	return conflict.Verify(ctx, server, read, st, r, o)
}
