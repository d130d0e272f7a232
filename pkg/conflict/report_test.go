package conflict_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/conflict"
)

// The report holds what it prints: every field has a JSON name. What the
// prediction carries besides (the objects, the schema) is the
// Simulation's.
func TestReportHoldsOnlyWhatItPrints(t *testing.T) {
	rt := reflect.TypeOf(conflict.Report{})
	for i := 0; i < rt.NumField(); i++ {
		f := rt.Field(i)
		if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); name == "" || name == "-" {
			t.Errorf("Report.%s is not printed (json %q)", f.Name, f.Tag.Get("json"))
		}
	}
}
