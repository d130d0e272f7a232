package e2e

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// A Secret's stringData is write-only: the apiserver stores it in data.
// Two appliers of .stringData.password conflict whatever their values, so
// explain-conflict neither shows the live value as "(not set)" nor offers
// to share it; its handover works when pasted; and dropping a stringData
// key is said to leave the data key, in explain-conflict and diff.
func TestExplainConflictSecretStringData(t *testing.T) {
	ns := namespace(t)
	s := apply(t, ns, "vault-sync", `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"db"},"stringData":{"password":"from-vault","user":"app"}}`, false)
	file := filepath.Join(t.TempDir(), "secret.yaml")
	writeFile(t, file, `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"db"},"stringData":{"password":"from-vault"}}`)
	res := ssa(t, "explain-conflict", "-n", ns, "-f", file, "--field-manager", "argocd-controller", "--color", "never")
	if res.code != 1 {
		t.Fatalf("exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	for _, want := range []string{
		"live value: (write-only: the apiserver stores it as .data.password)",
		".stringData.password: can't be shared: stringData is write-only (stored as .data.password), so every apply of it changes it",
	} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, res.stdout)
		}
	}
	if strings.Contains(res.stdout, "(not set)") || strings.Contains(res.stdout+res.stderr, "from-vault") {
		t.Errorf("a write-only field shown as not set, or a secret value shown:\n%s", res.stdout)
	}
	// The report says where the value is kept, for scripts too.
	js := ssa(t, "explain-conflict", "-n", ns, "-f", file, "--field-manager", "argocd-controller", "-o", "json")
	var report struct {
		Conflicts []struct {
			Path     string `json:"path"`
			StoredAs string `json:"storedAs"`
		} `json:"conflicts"`
	}
	if err := json.Unmarshal([]byte(js.stdout), &report); err != nil || len(report.Conflicts) != 1 || report.Conflicts[0].StoredAs != ".data.password" {
		t.Errorf("storedAs of the conflict (%v):\n%s", err, js.stdout)
	}
	// The handover it suggests works, as a server dry run and for real;
	// then the same manifest applies without conflict.
	var handover string
	for _, line := range strings.Split(res.stdout, "\n") {
		if cmdline, ok := strings.CutPrefix(strings.TrimSpace(line), "$ kubectl ssa handover "); ok {
			handover = cmdline
		}
	}
	if handover == "" {
		t.Fatalf("no handover suggested:\n%s", res.stdout)
	}
	args := append([]string{"handover"}, strings.Fields(handover)...)
	if r := handoverJSON(t, 0, append(args, "--dry-run=server")...); r.Status != "planned" {
		t.Errorf("handover --dry-run=server: %s %s", r.Status, stepNames(r))
	}
	// Its view says where the write-only value is, not that it is unset.
	if r := ssa(t, append(args, "--dry-run=server", "--color", "never")...); r.code != 0 ||
		!strings.Contains(r.stdout, ".stringData.password = (write-only: the apiserver stores it as .data.password)") || strings.Contains(r.stdout, "(not set)") {
		t.Errorf("handover --dry-run=server: exit %d:\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := handoverJSON(t, 0, args...); r.Status != "completed" {
		t.Errorf("handover: %s %s", r.Status, stepNames(r))
	}
	if r := ssa(t, "explain-conflict", "-n", ns, "-f", file, "--field-manager", "argocd-controller"); r.code != 0 {
		t.Errorf("after the handover: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	// vault-sync drops user: the data key stays, and both commands say so.
	writeFile(t, file, `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"db"}}`)
	want := "the manifest no longer sets .stringData.user, but the apiserver stored its value as .data.user, which this apply does not remove"
	for _, cmd := range []string{"explain-conflict", "diff"} {
		r := ssa(t, cmd, "-n", ns, "-f", file, "--field-manager", "vault-sync", "--color", "never")
		if r.code != 0 || !strings.Contains(r.stdout, want) {
			t.Errorf("%s: exit %d, want 0 and %q:\n%s%s", cmd, r.code, want, r.stdout, r.stderr)
		}
	}
	apply(t, ns, "vault-sync", `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"db"}}`, false)
	if _, ok, _ := unstructured.NestedString(get(t, s).Object, "data", "user"); !ok {
		t.Error("the data key went: the warning is wrong")
	}
}

// TestDiffStringDataOverAnEdit: data edited by hand, then the applier's
// stringData sets it anew: the value changes, so it does not "stay".
func TestDiffStringDataOverAnEdit(t *testing.T) {
	ns := namespace(t)
	s := apply(t, ns, "helm", `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"api"},"stringData":{"token":"one"}}`, false)
	patch(t, s, "kubectl-edit", `{"data":{"token":"ZWRpdGVk"}}`)
	file := filepath.Join(t.TempDir(), "secret.yaml")
	writeFile(t, file, `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"api"},"stringData":{"token":"two"}}`)
	r := mustSSA(t, 1, "diff", "-n", ns, "-f", file, "--field-manager", "helm", "-o", "json")
	var rep diffReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	modified := false
	for _, c := range rep.Changes {
		modified = modified || c.Path == ".data.token" && c.Change == "modified"
	}
	for _, st := range rep.Stays {
		for _, p := range st.Paths {
			if p == ".data.token" {
				t.Errorf("%s is said to stay, though the apply changes it: %+v", p, st)
			}
		}
	}
	if !modified {
		t.Errorf("no .data.token modified: %+v", rep.Changes)
	}
}
