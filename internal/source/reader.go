package source

import (
	"context"
	"fmt"

	"golang.org/x/sync/errgroup"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/admission"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/conflict"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/defaults"
)

// Reader reads everything the prediction of one apply needs
// (conflict.State), side by side where the source allows: the live
// object, the schemas, the autoscalers, admission.
type Reader struct {
	Source conflict.Source
	// Resolve puts a manifest's namespace as Source.Target would
	// (defaulted, checked) without a round trip, and may start reading
	// what comes next (its schema). It tells whether the autoscalers and
	// admission may then be read while the live object is, instead of
	// after it (false: after it; an error is left for Target to return).
	// Nil: after it.
	Resolve func(ctx context.Context, obj *unstructured.Unstructured) bool
	// Admission reads the cluster's admission and how obj's request is
	// matched; nil: admission is not read (the report says so).
	Admission func(ctx context.Context, obj *unstructured.Unstructured) (*admission.Config, admission.Request, error)
}

// Reader is the cluster's reader: every read it can make.
func (s *Cluster) Reader() Reader {
	return Reader{Source: s, Resolve: s.Resolve, Admission: s.Admission}
}

// Read reads what the apply of manifest as o needs. The autoscalers are
// listed, and admission read, while the live object and the schema are:
// a round trip, not serial ones. They start once the namespace is
// defaulted (by Resolve, or else by Target): a manifest without one must
// not list every namespace's autoscalers.
func (rd Reader) Read(ctx context.Context, manifest *unstructured.Unstructured, o conflict.Options) (st *conflict.State, err error) {
	defer func() { err = conflict.SecretError(manifest, err) }()
	st = &conflict.State{Manifest: manifest, Served: rd.Source.Served()}
	obj := manifest.DeepCopy()
	resolved := rd.Resolve != nil && rd.Resolve(ctx, obj)
	// The manifest as the server reads it (named with its namespace,
	// once defaulted).
	if st.Applied, st.Rewritten, err = conflict.ApplyBody(obj); err != nil {
		return nil, err
	}
	var beside errgroup.Group
	if resolved {
		rd.readBeside(ctx, &beside, st)
		if gvk := st.Applied.GroupVersionKind(); !conflict.IsCustom(gvk) {
			// The kind's defaults are decoded meanwhile too (memoized:
			// the prediction's own lookup finds them).
			beside.Go(func() error { defaults.Builtin(gvk); return nil })
		}
	}
	if st.Target, err = rd.Source.Target(ctx, st.Applied); err != nil {
		// The reads end first: they read what the caller changes next
		// (the namespaces the input applies).
		_ = beside.Wait()
		return nil, err
	}
	if !resolved {
		rd.readBeside(ctx, &beside, st)
	}
	err = conflict.ReadSchemas(ctx, rd.Source, st, o)
	if werr := beside.Wait(); err == nil {
		err = werr
	}
	if err != nil {
		return nil, err
	}
	return st, nil
}

// readBeside starts, in g, the reads that need only the apply's body as
// sent (st.Sent, set here): its autoscalers and its admission.
func (rd Reader) readBeside(ctx context.Context, g *errgroup.Group, st *conflict.State) {
	st.Sent = st.Applied.DeepCopy()
	sent := st.Sent
	g.Go(func() error {
		st.Autoscalers, st.AutoscalersWarning = conflict.AutoscalersOf(ctx, rd.Source, sent)
		return nil
	})
	if rd.Admission == nil {
		return
	}
	st.AdmissionRead = true
	g.Go(func() error {
		c, req, err := rd.Admission(ctx, sent)
		if err != nil {
			return fmt.Errorf("reading the cluster's admission: %w", err)
		}
		st.Admission, st.AdmissionRequest = c, req
		return nil
	})
}
