package ownership_test

import (
	"encoding/json"
	"runtime"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
)

// deepObject is a ConfigMap whose spec nests depth levels, all owned by
// one manager: fieldsV1 as deep as the object.
func deepObject(t testing.TB, depth int) *unstructured.Unstructured {
	fields := strings.Repeat(`{"f:a":`, depth) + "{}" + strings.Repeat("}", depth)
	spec := strings.Repeat(`{"a":`, depth) + `"leaf"` + strings.Repeat("}", depth)
	doc := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"deep","managedFields":[{"manager":"m","operation":"Apply","apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:spec":` + fields + `}}]},"spec":` + spec + `}`
	u := &unstructured.Unstructured{}
	if err := json.Unmarshal([]byte(doc), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

// A 5,000-level fieldsV1 costs memory in proportion to its depth: every
// node's path extends its parent's instead of copying it (444 MB before).
func TestAnalyzeDeepIsLinear(t *testing.T) {
	obj := deepObject(t, 5000)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	r, err := ownership.Analyze(obj, ownership.Options{})
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Fields) != 1 || len(r.Fields[0].Path) != 5001 {
		t.Fatalf("%d fields", len(r.Fields))
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 32<<20 {
		t.Errorf("Analyze allocated %d MB for 5,000 levels", got>>20)
	}
}

func BenchmarkAnalyzeDeep(b *testing.B) {
	obj := deepObject(b, 5000)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ownership.Analyze(obj, ownership.Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
