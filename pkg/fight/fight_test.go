package fight

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
)

// write is one write: who owns .spec.replicas afterwards and its value.
type write struct {
	manager, op, sub string
	replicas         int
	// at is seconds since the start.
	at int
}

func object(w write) *unstructured.Unstructured {
	entry := map[string]any{"manager": w.manager, "operation": w.op, "apiVersion": "apps/v1", "fieldsType": "FieldsV1",
		"fieldsV1": map[string]any{"f:spec": map[string]any{"f:replicas": map[string]any{}}}}
	if w.sub != "" {
		entry["subresource"] = w.sub
	}
	// The image is always the applier's: it never flips.
	image := map[string]any{"manager": "gitops", "operation": "Apply", "apiVersion": "apps/v1", "fieldsType": "FieldsV1",
		"fieldsV1": map[string]any{"f:spec": map[string]any{"f:image": map[string]any{}}}}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web", "namespace": "shop", "uid": "u1", "managedFields": []any{image, entry}},
		"spec":     map[string]any{"replicas": int64(w.replicas), "image": fmt.Sprintf("v%d", w.at)},
	}}
}

func TestTracker(t *testing.T) {
	apply := func(r, at int) write { return write{"gitops", "Apply", "", r, at} }
	scale := func(r, at int) write { return write{"hpa", "Update", "scale", r, at} }
	tests := []struct {
		name   string
		writes []write
		// want: the flips of each fight reported, in order.
		want []int
	}{
		{"two writers alternating", []write{apply(2, 0), scale(5, 1), apply(2, 2), scale(5, 3), apply(2, 4)}, []int{3, 4}},
		{"a single handover", []write{apply(2, 0), scale(5, 1), scale(6, 2), scale(7, 3)}, nil},
		{"the applier alone, a rollout changing values", []write{apply(2, 0), apply(3, 1), apply(4, 2), apply(2, 3)}, nil},
		{"a chain of handovers never comes back", []write{apply(2, 0), scale(5, 1), {"c", "Update", "", 6, 2}, {"d", "Apply", "", 7, 3}}, nil},
		{"a new owner of the same value is no flip", []write{apply(2, 0), scale(2, 1), apply(2, 2), scale(2, 3)}, nil},
		{"flips spread beyond the window", []write{apply(2, 0), scale(5, 100), apply(2, 400), scale(5, 700), apply(2, 1000)}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := New(Options{MinFlips: 3, Window: 5 * time.Minute})
			start := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
			var got []int
			for _, w := range tt.writes {
				fs, err := tr.Observe(object(w), start.Add(time.Duration(w.at)*time.Second))
				if err != nil {
					t.Fatal(err)
				}
				for _, f := range fs {
					got = append(got, f.Flips)
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if tr.Seen() != (len(tt.want) > 0) {
				t.Errorf("Seen() = %v", tr.Seen())
			}
		})
	}
}

func TestFightRecord(t *testing.T) {
	tr := New(Options{MinFlips: 3, Window: time.Minute})
	start := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	var last []v1alpha1.Fight
	for i, w := range []write{{"gitops", "Apply", "", 2, 0}, {"hpa", "Update", "scale", 5, 10}, {"gitops", "Apply", "", 2, 20}, {"hpa", "Update", "scale", 5, 30}} {
		fs, err := tr.Observe(object(w), start.Add(time.Duration(w.at)*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		if i == 3 {
			last = fs
		}
	}
	if len(last) != 1 {
		t.Fatalf("%d fights", len(last))
	}
	b, _ := json.Marshal(last[0])
	want := `{"apiVersion":"ssa.kubectl-ssa.io/v1alpha1","kind":"Fight","object":{"apiVersion":"apps/v1","kind":"Deployment","namespace":"shop","name":"web","uid":"u1","resourceVersion":""},"path":".spec.replicas","managers":[{"manager":"gitops","operation":"Apply","subresource":"","apiVersion":"apps/v1","time":null,"value":2},{"manager":"hpa","operation":"Update","subresource":"scale","apiVersion":"apps/v1","time":null,"value":5}],"values":[2,5],"flips":3,"since":"2026-11-23T12:00:10Z","last":"2026-11-23T12:00:30Z","perMinute":9}`
	if diff := cmp.Diff(want, string(b)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestSecretValuesAreRedacted(t *testing.T) {
	for _, field := range []string{"data", "stringData"} {
		t.Run(field, func(t *testing.T) { secretFight(t, field) })
	}
}

// secretFight: two writers alternate a Secret's password, written in
// field (stringData is stored in data, where the value is read).
func secretFight(t *testing.T, field string) {
	secret := func(manager, op, value string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "Secret",
			"metadata": map[string]any{"name": "db", "namespace": "shop", "uid": "s1", "managedFields": []any{
				map[string]any{"manager": manager, "operation": op, "apiVersion": "v1", "fieldsType": "FieldsV1",
					"fieldsV1": map[string]any{"f:" + field: map[string]any{"f:password": map[string]any{}}}},
			}},
			"data": map[string]any{"password": value},
		}}
	}
	tr := New(Options{MinFlips: 3, Window: time.Minute})
	start := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	var last []v1alpha1.Fight
	for i, w := range []struct{ m, op, v string }{{"vault", "Apply", "aHVudGVyMg=="}, {"rotator", "Update", "c2VjcmV0"}, {"vault", "Apply", "aHVudGVyMg=="}, {"rotator", "Update", "c2VjcmV0"}} {
		fs, err := tr.Observe(secret(w.m, w.op, w.v), start.Add(time.Duration(i)*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		last = fs
	}
	if len(last) != 1 {
		t.Fatalf("%d fights", len(last))
	}
	b, _ := json.Marshal(last[0])
	if strings.Contains(string(b), "aHVudGVyMg") || strings.Contains(string(b), "c2VjcmV0") {
		t.Errorf("the fight shows secret values: %s", b)
	}
	if got := fmt.Sprintf("%v %v %v", last[0].Values, last[0].Managers[0].Value, last[0].Managers[1].Value); got != "[<redacted> #1 <redacted> #2] <redacted> #1 <redacted> #2" {
		t.Errorf("got %s", got)
	}
}

// A stringData writer and a data writer of the same key fight over one
// value: both keep their entries (ownership never moves between the two
// paths), and the one written last wrote the value.
func TestSecretStringDataAgainstData(t *testing.T) {
	start := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	entry := func(manager, op, field string, at time.Time) any {
		return map[string]any{"manager": manager, "operation": op, "apiVersion": "v1", "fieldsType": "FieldsV1", "time": at.Format(time.RFC3339),
			"fieldsV1": map[string]any{"f:" + field: map[string]any{"f:password": map[string]any{}}}}
	}
	tr := New(Options{MinFlips: 3, Window: time.Minute})
	var last []v1alpha1.Fight
	vaultAt, rotatorAt := start, start
	for i := 0; i < 4; i++ {
		now := start.Add(time.Duration(i+1) * time.Second)
		value := "aHVudGVyMg=="
		if i%2 == 0 {
			vaultAt = now
		} else {
			rotatorAt, value = now, "c2VjcmV0"
		}
		obj := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "Secret",
			"metadata": map[string]any{"name": "db", "namespace": "shop", "uid": "s1", "managedFields": []any{
				entry("vault", "Apply", "stringData", vaultAt), entry("rotator", "Update", "data", rotatorAt),
			}},
			"data": map[string]any{"password": value},
		}}
		fs, err := tr.Observe(obj, now)
		if err != nil {
			t.Fatal(err)
		}
		last = fs
	}
	if len(last) != 1 {
		t.Fatalf("%d fights, want 1", len(last))
	}
	var names []string
	for _, m := range last[0].Managers {
		names = append(names, m.Manager)
	}
	if got := fmt.Sprintf("%s %v %d", last[0].Path, names, last[0].Flips); got != ".data.password [vault rotator] 3" {
		t.Errorf("got %s", got)
	}
	if b, _ := json.Marshal(last[0]); strings.Contains(string(b), "aHVudGVyMg") || strings.Contains(string(b), "c2VjcmV0") {
		t.Errorf("the fight shows secret values: %s", b)
	}
}
