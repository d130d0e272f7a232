package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestVersion(t *testing.T) {
	r := mustSSA(t, 0, "version")
	// The test bed is the Kubernetes minor of the embedded field manager.
	if !strings.HasPrefix(r.stdout, "kubectl-ssa ") || !strings.HasSuffix(r.stdout, "\nserver v1.37.1 (exact: verified against a real apiserver of this minor)\n") || r.stderr != "" {
		t.Errorf("version: %q, stderr %q", r.stdout, r.stderr)
	}
	var v struct {
		Kind          string            `json:"kind"`
		Version       string            `json:"version"`
		GoVersion     string            `json:"goVersion"`
		Libraries     map[string]string `json:"libraries"`
		ServerVersion struct {
			GitVersion string `json:"gitVersion"`
		} `json:"serverVersion"`
		ServerSupport string `json:"serverSupport"`
	}
	if err := json.Unmarshal([]byte(mustSSA(t, 0, "version", "-o", "json").stdout), &v); err != nil || v.Kind != "Version" || v.GoVersion == "" {
		t.Fatalf("version -o json: %v %+v", err, v)
	}
	if v.ServerVersion.GitVersion != "v1.37.1" || v.ServerSupport != "exact" {
		t.Errorf("version -o json: serverVersion %+v, serverSupport %q", v.ServerVersion, v.ServerSupport)
	}
	if y := mustSSA(t, 0, "version", "-o", "yaml").stdout; !strings.Contains(y, "kind: Version") {
		t.Errorf("version -o yaml: %q", y)
	}
	if !strings.HasPrefix(v.Libraries["sigs.k8s.io/structured-merge-diff/v6"], "v6.") || !strings.HasPrefix(v.Libraries["k8s.io/client-go"], "v0.37.") {
		t.Errorf("libraries %v", v.Libraries)
	}
}

func TestHelpShowsKubectlSSA(t *testing.T) {
	out := mustSSA(t, 0, "--help").stdout
	for _, want := range []string{"kubectl ssa [command]", "who-owns", "explain-conflict", "handover", "migrate", "audit", "watch", "--kubeconfig", "--context", "--namespace"} {
		if !strings.Contains(out, want) {
			t.Errorf("help lacks %q", want)
		}
	}
}

func TestCompletion(t *testing.T) {
	ns := namespace(t)
	apply(t, ns, "a", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"complete-me"},"data":{"k":"v"}}`, false)
	for _, shell := range []string{"bash", "zsh", "fish"} {
		if out := mustSSA(t, 0, "completion", shell).stdout; !strings.Contains(out, "kubectl-ssa") && !strings.Contains(out, "ssa") {
			t.Errorf("completion %s: %q", shell, out[:min(len(out), 200)])
		}
	}
	// Resource types from discovery, names from the cluster.
	types := mustSSA(t, 0, "__complete", "who-owns", "config").stdout
	if !strings.Contains(types, "configmaps\n") {
		t.Errorf("types: %q", types)
	}
	names := mustSSA(t, 0, "__complete", "who-owns", "-n", ns, "configmaps", "").stdout
	if !strings.Contains(names, "complete-me\n") {
		t.Errorf("names: %q", names)
	}
	slash := mustSSA(t, 0, "__complete", "who-owns", "-n", ns, "configmaps/comp").stdout
	if !strings.Contains(slash, "configmaps/complete-me\n") {
		t.Errorf("TYPE/NAME: %q", slash)
	}
	managers := mustSSA(t, 0, "__complete", "who-owns", "-n", ns, "configmaps/complete-me", "--manager", "").stdout
	if !strings.HasPrefix(managers, "a\n") {
		t.Errorf("--manager completion: %q", managers)
	}
	// kubectl's plugin completion runs kubectl_complete-ssa.
	shim, err := filepath.Abs(filepath.Join(repoRoot(), "kubectl_complete-ssa"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(shim, "who-owns", "-n", ns, "configmaps", "")
	cmd.Env = os.Environ()
	out, err := cmd.Output()
	if err != nil || !strings.Contains(string(out), "complete-me") {
		t.Errorf("kubectl_complete-ssa: %v %q", err, out)
	}
}
