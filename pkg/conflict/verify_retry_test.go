package conflict_test

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/conflict"
)

// racingSource is an OfflineSource whose object a controller writes
// between the read and the dry run, once: the first dry run answers for
// resourceVersion 2, which the first prediction (from 1) can't match.
type racingSource struct {
	*conflict.OfflineSource
	after     *unstructured.Unstructured // the object once the controller wrote
	answer    []metav1.ManagedFieldsEntry
	dryRuns   int
	switched  bool
	predicted int
}

func (s *racingSource) Target(ctx context.Context, obj *unstructured.Unstructured) (*conflict.Target, error) {
	s.predicted++
	return s.OfflineSource.Target(ctx, obj)
}

func (s *racingSource) DryRunApply(_ context.Context, obj, _ *unstructured.Unstructured, _ metav1.ApplyOptions, _ string) (*unstructured.Unstructured, error) {
	s.dryRuns++
	if !s.switched {
		// The controller's write lands now: later reads see it.
		s.switched = true
		s.Lives = []*unstructured.Unstructured{s.after}
	}
	out := obj.DeepCopy()
	out.SetResourceVersion("2")
	out.SetManagedFields(s.answer)
	return out, nil
}

// --verify reads again and predicts again when the object changed between
// its read and the dry run, instead of reporting that the prediction
// differs from the server's answer about another object.
func TestVerifyRetriesWhenTheObjectChanged(t *testing.T) {
	live := func(rv, manager string) *unstructured.Unstructured {
		u := manifest(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"shop","resourceVersion":"`+rv+`","managedFields":[
			{"manager":"gitops","operation":"Apply","apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{"f:a":{}}}},
			{"manager":"`+manager+`","operation":"Update","apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:labels":{"f:x":{}}}}}]},
			"data":{"a":"1"}}`)
		u.SetLabels(map[string]string{"x": manager})
		return u
	}
	applied := manifest(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"shop"},"data":{"a":"2"}}`)
	// What the server answers: the apply over the object at version 2.
	after := live("2", "controller")
	offline2, err := conflict.NewOfflineSource([]*unstructured.Unstructured{after}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want, err := conflict.Explain(context.Background(), offline2, applied, conflict.Options{FieldManager: "gitops"})
	if err != nil {
		t.Fatal(err)
	}
	offline1, err := conflict.NewOfflineSource([]*unstructured.Unstructured{live("1", "other")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	src := &racingSource{OfflineSource: offline1, after: after, answer: want.ManagedFields}
	r, err := explainVerified(context.Background(), src, applied, conflict.Options{FieldManager: "gitops"})
	if err != nil {
		t.Fatal(err)
	}
	if r.Verify == nil || !r.Verify.Agrees || r.Verify.FirstApplyOnly {
		t.Fatalf("verify: %+v", r.Verify)
	}
	if src.dryRuns != 2 || src.predicted != 2 {
		t.Errorf("%d dry runs and %d predictions, want 2 and 2", src.dryRuns, src.predicted)
	}
}
