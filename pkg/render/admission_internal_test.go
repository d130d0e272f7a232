package render

import (
	"testing"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/admission"
)

// An appended value that is not a string (a taint) reads as JSON.
func TestAdmissionLineOfAnAppendedObject(t *testing.T) {
	a := &admission.Report{Exact: true, Steps: []admission.Step{{Kind: admission.Builtin, Name: "TaintNodesByCondition", Effect: admission.Mutates,
		Ops: []admission.Op{{Op: admission.OpAppend, Path: []string{"spec", "taints"}, Value: map[string]interface{}{"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}, Atomic: true}}}}}
	lines, _ := admissionLines(a, "--verify")
	want := `admission: plugin TaintNodesByCondition adds {"effect":"NoSchedule","key":"node.kubernetes.io/not-ready"} to .spec.taints (owned by the applier with the rest of the atomic list: its next apply without it removes it; in the prediction)`
	if len(lines) != 1 || lines[0] != want {
		t.Errorf("%q\nwant %q", lines, want)
	}
}
