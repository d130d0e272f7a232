package cmd_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The scripts complete the binary, kubectl-ssa; no shell has a command
// named after the root command, "ssa".
func TestCompletionScriptsCompleteTheBinary(t *testing.T) {
	tests := []struct {
		shell string
		want  []string
	}{
		{shell: "bash", want: []string{"complete -o default -F __start_kubectl-ssa kubectl-ssa"}},
		{shell: "zsh", want: []string{"#compdef kubectl-ssa", "compdef _kubectl-ssa kubectl-ssa"}},
		{shell: "fish", want: []string{"complete -c kubectl-ssa -e"}},
		{shell: "powershell", want: []string{"Register-ArgumentCompleter -CommandName 'kubectl-ssa'"}},
	}
	for _, tt := range tests {
		t.Run(tt.shell, func(t *testing.T) {
			r := run(t, "completion", tt.shell)
			if r.err != nil {
				t.Fatal(r.err)
			}
			for _, w := range tt.want {
				if !strings.Contains(r.out, w) {
					t.Errorf("script lacks %q", w)
				}
			}
			for _, line := range strings.Split(r.out, "\n") {
				fields := strings.Fields(line)
				if len(fields) > 0 && (fields[len(fields)-1] == "ssa" || strings.Contains(line, "-c ssa ") || strings.Contains(line, "_ssa ")) {
					t.Errorf("script registers ssa: %q", line)
				}
			}
		})
	}
	help := run(t, "completion", "bash", "--help")
	if !strings.Contains(help.out, "source <(kubectl-ssa completion bash)") {
		t.Errorf("help does not say how to load the script for kubectl-ssa:\n%s", help.out)
	}
}

// complete runs cobra's completion request as the shell scripts do and
// returns the candidates.
func complete(t *testing.T, args ...string) []string {
	t.Helper()
	r := run(t, append([]string{"__complete"}, args...)...)
	if r.err != nil {
		t.Fatalf("%v: %v", args, r.err)
	}
	lines := strings.Split(strings.TrimSpace(r.out), "\n")
	out := []string{}
	for _, l := range lines {
		if !strings.HasPrefix(l, ":") {
			out = append(out, l)
		}
	}
	return out
}

func TestCompleteField(t *testing.T) {
	files := []string{"--local", "-f", "testdata/deployment.yaml"}
	tests := []struct {
		name  string
		cmd   []string
		typed string
		want  []string
	}{
		{name: "one element at a time", cmd: []string{"who-owns"}, typed: ".spec.te", want: []string{".spec.template"}},
		{name: "the fields below", cmd: []string{"who-owns"}, typed: ".spec.template.spec.containers[", want: []string{
			`.spec.template.spec.containers[name="sidecar"]`, `.spec.template.spec.containers[name="web"]`}},
		{name: "below a keyed item", cmd: []string{"who-owns"}, typed: `.spec.template.spec.containers[name="web"].po`, want: []string{`.spec.template.spec.containers[name="web"].ports`}},
		{name: "a dotted label, quoted", cmd: []string{"who-owns"}, typed: ".metadata.labels[", want: []string{`.metadata.labels["app.kubernetes.io/name"]`}},
		{name: "unowned fields too", cmd: []string{"who-owns"}, typed: ".spec.str", want: []string{".spec.strategy"}},
		{name: "without the leading dot", cmd: []string{"who-owns"}, typed: "spec.repl", want: []string{"spec.replicas"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := complete(t, append(append(append([]string{}, tt.cmd...), files...), "--field", tt.typed)...)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("--field %s<TAB> (-want +got):\n%s", tt.typed, diff)
			}
		})
	}
}

const kubeconfig = `apiVersion: v1
kind: Config
clusters:
- name: test
  cluster: {server: %s}
contexts:
- name: prod
  context: {cluster: test, user: u}
- name: staging
  context: {cluster: test, user: u}
- name: dev
  context: {cluster: test, user: u}
current-context: dev
users:
- name: u
  user: {token: x}
`

// writeKubeconfig writes a kubeconfig for server and points HOME at a
// temporary directory, where client-go keeps its discovery cache.
func writeKubeconfig(t *testing.T, server string) string {
	t.Helper()
	t.Setenv("HOME", t.TempDir())
	path := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(path, []byte(fmt.Sprintf(kubeconfig, server)), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestCompleteContext(t *testing.T) {
	cfg := writeKubeconfig(t, "https://127.0.0.1:1")
	if diff := cmp.Diff([]string{"dev", "prod", "staging"}, complete(t, "who-owns", "--kubeconfig", cfg, "--context", "")); diff != "" {
		t.Errorf("--context <TAB> (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"staging"}, complete(t, "handover", "--kubeconfig", cfg, "--context", "st")); diff != "" {
		t.Errorf("--context st<TAB> (-want +got):\n%s", diff)
	}
}

// -n completes the namespaces of the cluster: a fake apiserver serves
// discovery and the namespace list.
func TestCompleteNamespace(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/api":
			fmt.Fprint(w, `{"kind":"APIVersions","versions":["v1"]}`)
		case "/apis":
			fmt.Fprint(w, `{"kind":"APIGroupList","apiVersion":"v1","groups":[]}`)
		case "/api/v1":
			fmt.Fprint(w, `{"kind":"APIResourceList","groupVersion":"v1","resources":[{"name":"namespaces","singularName":"namespace","namespaced":false,"kind":"Namespace","verbs":["get","list"],"shortNames":["ns"]}]}`)
		case "/api/v1/namespaces":
			fmt.Fprint(w, `{"kind":"NamespaceList","apiVersion":"v1","metadata":{},"items":[{"metadata":{"name":"shop"}},{"metadata":{"name":"default"}},{"metadata":{"name":"kube-system"}}]}`)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	cfg := writeKubeconfig(t, srv.URL)
	if diff := cmp.Diff([]string{"default", "kube-system", "shop"}, complete(t, "who-owns", "--kubeconfig", cfg, "-n", "")); diff != "" {
		t.Errorf("-n <TAB> (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"shop"}, complete(t, "migrate", "--kubeconfig", cfg, "--namespace", "sh")); diff != "" {
		t.Errorf("--namespace sh<TAB> (-want +got):\n%s", diff)
	}
}

func TestCompleteAuditAndWatchFlags(t *testing.T) {
	if diff := cmp.Diff([]string{"info", "warning", "error", "never"}, complete(t, "audit", "--fail-on", "")); diff != "" {
		t.Errorf("audit --fail-on <TAB> (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"table", "wide", "html", "sarif", "markdown", "junit", "json", "yaml", "jsonpath=", "go-template="}, complete(t, "audit", "-o", "")); diff != "" {
		t.Errorf("audit -o <TAB> (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"text", "json"}, complete(t, "watch", "-o", "")); diff != "" {
		t.Errorf("watch -o <TAB> (-want +got):\n%s", diff)
	}
	cfg := writeKubeconfig(t, "https://127.0.0.1:1")
	if diff := cmp.Diff([]string{"dev", "prod", "staging"}, complete(t, "watch", "--kubeconfig", cfg, "--context", "")); diff != "" {
		t.Errorf("watch --context <TAB> (-want +got):\n%s", diff)
	}
}
