package render

import (
	"strings"
	"testing"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
)

// An appended value that is not a string (a taint) reads as JSON.
func TestAdmissionLineOfAnAppendedObject(t *testing.T) {
	a := &v1alpha1.AdmissionReport{Exact: true, Steps: []v1alpha1.AdmissionStep{{Kind: v1alpha1.BuiltinPlugin, Name: "TaintNodesByCondition", Effect: v1alpha1.EffectMutates,
		Ops: []v1alpha1.AdmissionOp{{Op: v1alpha1.OpAppend, Path: []string{"spec", "taints"}, Value: map[string]any{"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}, Atomic: true}}}}}
	lines, _ := admissionLines(a, "--verify")
	want := `admission: plugin TaintNodesByCondition adds {"effect":"NoSchedule","key":"node.kubernetes.io/not-ready"} to .spec.taints (owned by the applier with the rest of the atomic list: its next apply without it removes it; in the prediction)`
	if len(lines) != 1 || lines[0] != want {
		t.Errorf("%q\nwant %q", lines, want)
	}
}

// Two autoscalers of one object: one note, naming both, and the fight.
func TestAutoscalerNoteOfTwo(t *testing.T) {
	var b strings.Builder
	r := &v1alpha1.ConflictReport{Autoscalers: []v1alpha1.Autoscaler{{Name: "h1", MinReplicas: 1, MaxReplicas: 3}, {Name: "h2", MinReplicas: 2, MaxReplicas: 5}}}
	writeAutoscalerNote(&b, NewPalette(false), r)
	out := b.String()
	if strings.Count(out, "note:") != 1 || !strings.Contains(out, "h1 (min 1, max 3), h2 (min 2, max 5) all scale this object: they fight") {
		t.Errorf("%s", out)
	}
}

// A warning the server returns as predicted is said once, not twice.
func TestPredictedServerWarningSaidOnce(t *testing.T) {
	var b strings.Builder
	warn := "would violate PodSecurity \"restricted:latest\": privileged"
	r := &v1alpha1.ConflictReport{Admission: &v1alpha1.AdmissionReport{Exact: true, Warnings: []string{warn}},
		Verify: &v1alpha1.Verification{Status: v1alpha1.VerifyAgrees, ServerWarnings: []string{warn, "other"}}}
	writeVerification(&b, NewPalette(false), r)
	out := b.String()
	if strings.Contains(out, "dry run warns: "+warn) || !strings.Contains(out, "dry run warns: other") || !strings.Contains(out, "the 1 predicted warning(s)") {
		t.Errorf("%s", out)
	}
}

// TestResetTextSaysANullWas: a reset of a field the live object holds as
// null says it was not set; one the live object lacks says nothing of it.
func TestResetTextSaysANullWas(t *testing.T) {
	var null any
	old := any("m")
	for _, c := range []struct {
		rs   v1alpha1.Reset
		want string
	}{
		{v1alpha1.Reset{Value: "red", Was: &null}, `reset to its default "red" (was (not set))`},
		{v1alpha1.Reset{Value: "l", Was: &old}, `reset to its default "l" (was "m")`},
		{v1alpha1.Reset{Value: "round"}, `reset to its default "round"`},
		{v1alpha1.Reset{Value: "l", Unchanged: true}, `reset to its default "l" (unchanged)`},
	} {
		if got := resetText(c.rs); got != c.want {
			t.Errorf("resetText = %q, want %q", got, c.want)
		}
	}
}

// A refusal the server's configuration decides names the setting.
func TestVerificationNamesTheServerConfiguration(t *testing.T) {
	var b strings.Builder
	r := &v1alpha1.ConflictReport{Verify: &v1alpha1.Verification{Status: v1alpha1.VerifyResolved, ServerConfiguration: []string{"--allow-privileged"},
		ServerDenied: "forbidden", Differences: []string{"the server refuses the apply, as its configuration (--allow-privileged) decides: forbidden"}, ServerWarnings: []string{}}}
	writeVerification(&b, NewPalette(false), r)
	want := "\n--verify: the server's dry run answers for what its configuration decides (--allow-privileged): it refuses the apply:\n" +
		"  the server refuses the apply, as its configuration (--allow-privileged) decides: forbidden\n"
	if got := b.String(); got != want {
		t.Errorf("%q\nwant %q", got, want)
	}
}
