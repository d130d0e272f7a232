package cmd

import (
	"bytes"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
)

// hostile is a manager name that would colour the terminal red and start
// a line of its own, if printed raw.
const hostile = "ci\x1b[31m\nfake: done"

// noRawControl fails when s holds a control character other than the
// newline that ends each line, or a line break inside a line.
func noRawControl(t *testing.T, s string, lines int) {
	t.Helper()
	for _, r := range s {
		if (r < 0x20 && r != '\n') || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			t.Errorf("raw control character %U in %q", r, s)
		}
	}
	if n := strings.Count(s, "\n"); n != lines {
		t.Errorf("%d lines, want %d: %q", n, lines, s)
	}
}

// handover's progress line on stderr names the step's manager escaped.
func TestHandoverProgressEscapes(t *testing.T) {
	var errOut bytes.Buffer
	handoverProgress(&errOut, "Deployment/shop/web")(v1alpha1.HandoverStep{Name: v1alpha1.StepRelease, Manager: hostile, Status: v1alpha1.StepDone})
	noRawControl(t, errOut.String(), 1)
	if want := `Deployment/shop/web: release (ci^[[31m\nfake: done) done` + "\n"; errOut.String() != want {
		t.Errorf("got %q, want %q", errOut.String(), want)
	}
}

// migrate's warning about a --from that names no manager escapes it.
func TestMigrateFromWarningEscapes(t *testing.T) {
	streams, _, out, errOut := genericiooptions.NewTestIOStreams()
	o := &migrateOptions{globalOptions: &globalOptions{streams: streams, color: "never"}, mode: v1alpha1.MigrateRelease, from: []string{hostile}}
	o.output.raw, o.output.views = "text", []string{"text"}
	if err := o.output.parse(); err != nil {
		t.Fatal(err)
	}
	if err := o.finish(&v1alpha1.MigrationReport{Objects: []v1alpha1.ObjectResult{}, Summary: v1alpha1.MigrationSummary{Scanned: 2}}); err != nil {
		t.Fatal(err)
	}
	noRawControl(t, errOut.String(), 1)
	if !strings.Contains(errOut.String(), `warning: none of the 2 objects has a manager named "ci\x1b[31m\nfake: done"`) {
		t.Errorf("stderr: %q", errOut.String())
	}
	_ = out
}
