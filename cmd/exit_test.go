package cmd

import (
	"bytes"
	"context"
	"syscall"
	"testing"
)

// TestStoppedLine: a command over many objects stopped by a signal says,
// in one line, where it stopped, escaped for the terminal, and exits as
// the signal says.
func TestStoppedLine(t *testing.T) {
	var out bytes.Buffer
	err := &ExitError{Code: CodePartial, Err: &StoppedError{Where: "handover stopped at ConfigMap/ns/c\x1b[31m, object 3 of 9", Err: context.Canceled}}
	code := Exit(&out, err, syscall.SIGTERM)
	if code != 143 {
		t.Errorf("exit %d, want 143", code)
	}
	if want := "error: interrupted (terminated): handover stopped at ConfigMap/ns/c^[[31m, object 3 of 9\n"; out.String() != want {
		t.Errorf("stderr %q, want %q", out.String(), want)
	}
}
