package source_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-ssa/kubectl-ssa/internal/scenario"
	"github.com/kubectl-ssa/kubectl-ssa/internal/source"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/admission"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/conflict"
)

// readsSource is an OfflineSource that resolves, reads admission and
// lists autoscalers, and whose Target waits (up to a deadline) for
// the autoscaler and admission reads to have started.
type readsSource struct {
	*conflict.OfflineSource
	resolve   bool
	targetErr error
	admission chan struct{}
	hpas      chan struct{}
	wait      time.Duration // how long Target waits for the reads
	sawReads  bool          // Target saw both reads started
}

func (s *readsSource) Resolve(_ context.Context, obj *unstructured.Unstructured) bool {
	if obj.GetNamespace() == "" {
		obj.SetNamespace("shop")
	}
	return s.resolve
}

func (s *readsSource) Target(ctx context.Context, obj *unstructured.Unstructured) (*conflict.Target, error) {
	// (Reads started after Target never come: the deadline ends the wait.)
	deadline := time.After(s.wait)
	s.sawReads = true
wait:
	for _, c := range []chan struct{}{s.admission, s.hpas} {
		select {
		case <-c:
		case <-deadline:
			s.sawReads = false
			break wait
		}
	}
	if s.targetErr != nil {
		return nil, s.targetErr
	}
	return s.OfflineSource.Target(ctx, obj)
}

func (s *readsSource) Admission(_ context.Context, obj *unstructured.Unstructured) (*admission.Config, admission.Request, error) {
	if obj.GetNamespace() != "shop" {
		return nil, admission.Request{}, errors.New("admission read before the namespace was defaulted")
	}
	close(s.admission)
	return &admission.Config{}, admission.Request{}, nil
}

func (s *readsSource) Autoscalers(ctx context.Context, namespace string) ([]unstructured.Unstructured, error) {
	if namespace != "shop" {
		return nil, errors.New("autoscalers listed before the namespace was defaulted")
	}
	close(s.hpas)
	return s.OfflineSource.Autoscalers(ctx, namespace)
}

// A Resolver's autoscalers and admission are read while the live object is
// (a round trip, not three in a row); without Resolve's yes, after it.
func TestReadsBesideTheLiveObject(t *testing.T) {
	applied := scenario.Manifest(t, `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},"spec":{"replicas":2}}`)
	for _, tc := range []struct {
		name      string
		resolve   bool
		targetErr error
		beside    bool
	}{
		{name: "resolved", resolve: true, beside: true},
		{name: "not resolved", resolve: false, beside: false},
		{name: "target fails", resolve: true, targetErr: errors.New("no such kind"), beside: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			offline, err := conflict.NewOfflineSource(nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			// Reads that start beside Target come at once (the long wait
			// is only for a busy machine); reads that start after it never
			// come while it waits.
			wait := 10 * time.Second
			if !tc.beside {
				wait = 50 * time.Millisecond
			}
			src := &readsSource{OfflineSource: offline, resolve: tc.resolve, targetErr: tc.targetErr, wait: wait, admission: make(chan struct{}), hpas: make(chan struct{})}
			rd := source.Reader{Source: src, Resolve: src.Resolve, Admission: src.Admission}
			_, err = rd.Read(context.Background(), applied, conflict.Options{FieldManager: "gitops"})
			if tc.targetErr != nil {
				if !errors.Is(err, tc.targetErr) {
					t.Fatalf("error %v, want Target's", err)
				}
				// Read returned after the reads it started: both ran.
				for _, c := range []chan struct{}{src.admission, src.hpas} {
					select {
					case <-c:
					default:
						t.Error("Read returned before the reads it started")
					}
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if src.sawReads != tc.beside {
				t.Errorf("reads started while the live object was read: %v, want %v", src.sawReads, tc.beside)
			}
		})
	}
}
