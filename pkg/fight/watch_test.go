package fight

import (
	"context"
	"errors"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
)

// TestWatch: the versions a stream delivers reach the tracker in order, a
// deletion forgets the object's history, a bad object is said and
// counted, and the stream's own error is returned.
func TestWatch(t *testing.T) {
	start := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	apply := func(r, at int) write { return write{"gitops", "Apply", "", r, at} }
	scale := func(r, at int) write { return write{"hpa", "Update", "scale", r, at} }
	bad := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "x", "uid": "u2", "managedFields": []any{
			map[string]any{"manager": "m", "operation": "Apply", "fieldsType": "FieldsV1", "fieldsV1": map[string]any{"bogus": 1}}}}}}
	lost := errors.New("the server went away")
	tests := []struct {
		name    string
		events  func(fn func(*unstructured.Unstructured, bool))
		flips   []int
		seen    bool
		failed  bool
		streamE error
	}{
		{"a fight", func(fn func(*unstructured.Unstructured, bool)) {
			for _, w := range []write{apply(2, 0), scale(5, 1), apply(2, 2), scale(5, 3)} {
				fn(object(w), false)
			}
		}, []int{3}, true, false, nil},
		{"a deletion forgets", func(fn func(*unstructured.Unstructured, bool)) {
			fn(object(apply(2, 0)), false)
			fn(object(scale(5, 1)), false)
			fn(object(scale(5, 1)), true)
			fn(object(apply(2, 2)), false)
			fn(object(scale(5, 3)), false)
		}, nil, false, false, nil},
		{"a bad object, then the stream fails", func(fn func(*unstructured.Unstructured, bool)) {
			fn(bad, false)
		}, nil, false, true, lost},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			at := 0
			var flips []int
			var said []error
			stream := func(ctx context.Context, fn func(*unstructured.Unstructured, bool)) error {
				tt.events(fn)
				return tt.streamE
			}
			res, err := Watch(context.Background(), stream, Options{MinFlips: 3, Window: time.Minute},
				func() time.Time { at++; return start.Add(time.Duration(at) * time.Second) },
				func(f v1alpha1.Fight) error { flips = append(flips, f.Flips); return nil },
				func(err error) { said = append(said, err) })
			if !errors.Is(err, tt.streamE) || (err == nil) != (tt.streamE == nil) {
				t.Errorf("err = %v, want %v", err, tt.streamE)
			}
			if len(flips) != len(tt.flips) || (len(flips) > 0 && flips[0] != tt.flips[0]) {
				t.Errorf("flips = %v, want %v", flips, tt.flips)
			}
			if res.Seen != tt.seen || (res.Failed != nil) != tt.failed || len(said) != map[bool]int{true: 1}[tt.failed] {
				t.Errorf("result %+v, said %v", res, said)
			}
		})
	}
}
