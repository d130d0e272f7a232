package e2e

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

type verifyReport struct {
	Message string `json:"message"`
	Verify  *struct {
		Status         string   `json:"status"`
		Agrees         bool     `json:"agrees"`
		Compared       string   `json:"compared"`
		FirstApplyOnly bool     `json:"firstApplyOnly"`
		Differences    []string `json:"differences"`
		Reason         string   `json:"reason"`
	} `json:"verify"`
}

func verifyJSON(t *testing.T, want int, args ...string) verifyReport {
	t.Helper()
	res := ssa(t, args...)
	if res.code != want {
		t.Fatalf("exit %d, want %d:\n%s\n%s", res.code, want, res.stdout, res.stderr)
	}
	var r verifyReport
	if err := json.Unmarshal([]byte(res.stdout), &r); err != nil {
		t.Fatalf("not a report: %v\n%s", err, res.stdout)
	}
	if r.Verify == nil {
		t.Fatalf("no verify in the report:\n%s", res.stdout)
	}
	return r
}

// After kubectl ssa migrate, kubectl apply --server-side keeps the
// last-applied annotation in a follow-up apply as kubectl-last-applied; the
// server's dry run sees only the first apply. --verify compares that, and
// agrees (it cried wolf here, exit 3, on 22 of 24 objects).
func TestVerifyAfterMigrateAgrees(t *testing.T) {
	ns := namespace(t)
	csaApply(t, ns, csaDeployment)
	csaApply(t, ns, csaConfigMap)
	mustSSA(t, 0, "migrate", "-n", ns, "deployments,configmaps", "--backup-dir", filepath.Join(t.TempDir(), "b"))
	for _, manifest := range []string{csaDeployment, csaConfigMap} {
		file := filepath.Join(t.TempDir(), "m.json")
		writeFile(t, file, manifest)
		r := verifyJSON(t, 0, "explain-conflict", "-n", ns, "-f", file, "--verify", "-o", "json")
		if r.Verify.Status != "agrees" || !r.Verify.Agrees || len(r.Verify.Differences) != 0 {
			t.Errorf("%s: %+v", manifest[:60], *r.Verify)
		}
		if !strings.Contains(r.Verify.Compared, "first apply") || !r.Verify.FirstApplyOnly {
			t.Errorf("compared %q (first apply only: %v): the follow-up step should be named", r.Verify.Compared, r.Verify.FirstApplyOnly)
		}
	}
}

// A user who may read but not patch gets the prediction, and is told, in
// text, JSON and the exit code, that it was not verified.
func TestVerifyRefusedDryRun(t *testing.T) {
	ns := namespace(t)
	csaApply(t, ns, csaConfigMap)
	configMapReader(t, ns, "reader")
	file := filepath.Join(t.TempDir(), "m.json")
	writeFile(t, file, csaConfigMap)
	r := verifyJSON(t, 4, "explain-conflict", "-n", ns, "-f", file, "--verify", "--as", "reader", "-o", "json")
	if r.Verify.Status != "refused" || r.Verify.Agrees || !strings.Contains(r.Verify.Reason, "patch permission") {
		t.Errorf("%+v", *r.Verify)
	}
	res := ssa(t, "explain-conflict", "-n", ns, "-f", file, "--verify", "--as", "reader")
	if res.code != 4 || !strings.Contains(res.stdout, "not verified") || !strings.Contains(res.stderr, "refused the dry run") {
		t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
	}
}
