package conflict_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
)

// The report holds what it prints: every field has a JSON name. What the
// prediction carries besides (the objects, the schema) is the
// Simulation's. Embedded structs (the TypeMeta header) are inlined: their
// fields are checked instead.
func TestReportHoldsOnlyWhatItPrints(t *testing.T) {
	for _, f := range reflect.VisibleFields(reflect.TypeOf(v1alpha1.ConflictReport{})) {
		if f.Anonymous && f.Tag.Get("json") == "" && f.Type.Kind() == reflect.Struct {
			continue
		}
		if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); name == "" || name == "-" {
			t.Errorf("Report.%s is not printed (json %q)", f.Name, f.Tag.Get("json"))
		}
	}
}
