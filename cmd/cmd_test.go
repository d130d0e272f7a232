package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// These tests run the root command as a user types it, without a
// cluster: every validation error and the --local flows. KUBECONFIG
// points nowhere, so anything that tries to reach a cluster fails loudly.

// The fixtures are shared with pkg/render's golden tests (see its
// testdata/README.md for how they were captured from the test bed).
const (
	deploymentFixture = "../pkg/render/testdata/deployment.yaml"
	configMapFixture  = "../pkg/render/testdata/configmap.yaml"
	secretFixture     = "../pkg/render/testdata/secret.yaml"
)

type result struct {
	out, err string
	code     Code
}

func run(t *testing.T, args ...string) result {
	t.Helper()
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "no-such-kubeconfig"))
	t.Setenv("NO_COLOR", "1")
	streams, _, out, errOut := genericiooptions.NewTestIOStreams()
	root := NewRootCmd(streams)
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	code := CodeOK
	if err != nil {
		code = CodeError
		var exit *ExitError
		if errors.As(err, &exit) {
			code = exit.Code
		}
		if exit == nil || exit.Err != nil {
			errOut.WriteString("error: " + err.Error() + "\n")
		}
	}
	return result{out: out.String(), err: errOut.String(), code: code}
}

func writeFile(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestValidationErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"who-owns: nothing selected", []string{"who-owns"}, "name the objects"},
		{"who-owns: bad view", []string{"who-owns", "deploy/web", "-o", "htm"}, `--output must be one of table, wide, blame, tree, managers, html, json, yaml, jsonpath=..., jsonpath-file=..., go-template=..., go-template-file=..., not "htm"`},
		{"who-owns: empty jsonpath", []string{"who-owns", "deploy/web", "-o", "jsonpath="}, "-o jsonpath= needs a template"},
		{"who-owns: bad time", []string{"who-owns", "deploy/web", "--time", "soon"}, "--time must be relative, absolute or none"},
		{"who-owns: bad operation", []string{"who-owns", "deploy/web", "--operation", "Patch"}, "--operation must be Apply or Update"},
		{"who-owns: shared and unowned", []string{"who-owns", "deploy/web", "--shared", "--unowned"}, "disjoint"},
		{"who-owns: -f and -k", []string{"who-owns", "-f", "x.yaml", "-k", "dir"}, "only one of -f and -k"},
		{"who-owns: names and selector", []string{"who-owns", "deploy", "web", "-l", "app=web"}, "name cannot be provided when a selector is specified"},
		{"who-owns: local without files", []string{"who-owns", "--local"}, "--local needs the objects in -f or -k"},
		{"who-owns: bad color", []string{"who-owns", "--local", "-f", configMapFixture, "--color", "pink"}, "--color must be auto, always or never"},
		{"audit: bad fix", []string{"audit", "--fix", "revert"}, `--fix must be adopt or forget, not "revert"`},
		{"explain-conflict: no manifests", []string{"explain-conflict"}, "give the manifests to simulate with -f or -k, or a Helm release with --helm-release"},
		{"explain-conflict: a live object", []string{"explain-conflict", "deploy/web"}, "explain-conflict reads the manifest you would apply, not a live object: give it with -f FILE (or -k DIR), e.g. kubectl ssa explain-conflict -f web.yaml; to see the live deploy/web's owners, run kubectl ssa who-owns deploy/web"},
		{"diff: a live object", []string{"diff", "deploy", "-n", "shop"}, "diff reads the manifest you would apply, not a live object: give it with -f FILE (or -k DIR), e.g. kubectl ssa diff -f deploy.yaml"},
		{"explain-conflict: bad subresource", []string{"explain-conflict", "-f", "x.yaml", "--subresource", "spec"}, "--subresource must be status or scale"},
		{"explain-conflict: bad --for", []string{"explain-conflict", "-f", "x.yaml", "--for", "argo"}, `--for must be argocd, flux or helm, not "argo"`},
		{"explain-conflict: empty manager", []string{"explain-conflict", "-f", "x.yaml", "--field-manager="}, "--field-manager: the manager name is empty"},
		{"explain-conflict: local and verify", []string{"explain-conflict", "-f", "x.yaml", "--local", "--live-file", "l.yaml", "--verify"}, "--verify asks the server, --local never does"},
		{"explain-conflict: live file without local", []string{"explain-conflict", "-f", "x.yaml", "--live-file", "l.yaml"}, "--live-file and --schema go with --local"},
		{"explain-conflict: max-age without snapshot", []string{"explain-conflict", "-f", "x.yaml", "--max-age", "1h"}, "--max-age goes with --snapshot"},
		{"explain-conflict: snapshot and local", []string{"explain-conflict", "-f", "x.yaml", "--snapshot", "s", "--local", "--live-file", "l.yaml"}, "--snapshot and --local are two offline sources"},
		{"snapshot: no file", []string{"snapshot", "deployments"}, "give the file to write with -o FILE"},
		{"snapshot: no kinds", []string{"snapshot", "-o", "x"}, "give the kinds to snapshot"},
		{"snapshot: named objects", []string{"snapshot", "-o", "x", "-f", "x.yaml"}, "a snapshot lists whole kinds"},
		{"snapshot: bad salt", []string{"snapshot", "deployments", "-o", "x", "--salt", "zz"}, "--salt must be at least 16 bytes in hex"},
		{"explain-conflict: local without live file", []string{"explain-conflict", "-f", "x.yaml", "--local"}, "--local needs the saved live objects"},
		{"explain-conflict: bad output", []string{"explain-conflict", "-f", "x.yaml", "-o", "table"}, "--output must be one of text, html, sarif, markdown, junit, json"},
		{"handover: no from", []string{"handover", "deploy/web", "--field", ".spec.replicas", "--to", "x"}, "name the manager that gives the fields up with --from"},
		{"handover: no to", []string{"handover", "deploy/web", "--field", ".spec.replicas", "--from", "x"}, "name the manager that takes the fields with --to"},
		{"handover: no field", []string{"handover", "deploy/web", "--from", "a", "--to", "b"}, "name the fields to hand over with --field"},
		{"handover: same manager", []string{"handover", "deploy/web", "--field", ".spec.replicas", "--from", "a", "--to", "a"}, "--from and --to are the same manager"},
		{"handover: bad mode", []string{"handover", "deploy/web", "--field", ".spec.replicas", "--from", "a", "--to", "b", "--mode", "fast"}, "--mode must be auto, controller or applier"},
		{"handover: bad dry run", []string{"handover", "deploy/web", "--field", ".spec.replicas", "--from", "a", "--to", "b", "--dry-run=all"}, "--dry-run must be none, client or server"},
		{"handover release: no fields", []string{"handover", "release", "deploy/web", "--from", "a"}, "name the fields with --field, or release all of them with --all"},
		{"handover: empty field", []string{"handover", "deploy/web", "--field", "", "--from", "a", "--to", "b"}, `--field "" is empty (an unset shell variable?): name a field, e.g. .spec.replicas (to make --from let go of every field, use kubectl ssa handover release --from a --all)`},
		{"handover: blank field", []string{"handover", "deploy/web", "--field", " \t", "--from", "a", "--to", "b"}, `--field " \t" is empty`},
		{"handover: root field", []string{"handover", "deploy/web", "--field", ".", "--from", "a", "--to", "b"}, `--field "." names the whole object, not a field`},
		{"handover: root field among others", []string{"handover", "deploy/web", "--field", ".spec.replicas", "--field", "{}", "--from", "a", "--to", "b"}, `--field "{}" names the whole object`},
		{"handover release: empty field", []string{"handover", "release", "deploy/web", "--from", "a", "--field", ""}, "or release every field of --from with --all"},
		{"handover release: root field", []string{"handover", "release", "deploy/web", "--from", "a", "--field", "."}, `--field "." names the whole object, not a field: name a field, e.g. .spec.replicas, or release every field of --from with --all`},
		{"migrate fold: no target", []string{"migrate", "fold", "cm/x"}, "name the applier that takes the fields with --field-manager"},
		{"migrate rename: no from", []string{"migrate", "rename", "cm/x", "--field-manager", "a"}, "name the managers with --from"},
		{"who-owns: endless template file", []string{"who-owns", "deploy/web", "-o", "go-template-file=/dev/zero"}, "-o go-template-file: /dev/zero holds more than 1048576 bytes, more than a template needs"},
		{"who-owns: missing template file", []string{"who-owns", "deploy/web", "-o", "jsonpath-file=/nonexistent/t"}, "-o jsonpath-file: open /nonexistent/t: no such file or directory"},
		{"who-owns: bad selector with --local", []string{"who-owns", "--local", "-f", configMapFixture, "-l", "a in (b"}, `-l "a in (b" is not a label selector`},
		{"who-owns: selector matching nothing with --local", []string{"who-owns", "--local", "-f", configMapFixture, "-l", "nope=1"}, "no object of -f/-k matches -l nope=1"},
		{"handover release: fields and all", []string{"handover", "release", "deploy/web", "--from", "a", "--all", "--field", ".x"}, "give --field or --all, not both"},
		{"migrate: nothing selected", []string{"migrate"}, "or --all-kinds"},
		{"migrate: all kinds and a type", []string{"migrate", "--all-kinds", "deploy"}, "--all-kinds selects every kind"},
		{"migrate: names and selector", []string{"migrate", "deploy", "web", "-l", "app=web"}, "name cannot be provided when a selector is specified"},
		{"migrate: -f and -k", []string{"migrate", "-f", "x", "-k", "y"}, "only one of -f and -k"},
		{"migrate: concurrency", []string{"migrate", "deploy/web", "--concurrency", "0"}, "--concurrency must be at least 1"},
		{"migrate: concurrency too large", []string{"migrate", "deploy/web", "--concurrency", "1000000"}, "--concurrency must be at most 256 (objects migrated at once)"},
		{"migrate: verify with dry run", []string{"migrate", "deploy/web", "--verify", "--dry-run=server"}, "--verify checks real writes"},
		{"migrate rename: no from", []string{"migrate", "rename", "deploy/web"}, "name the managers with --from"},
		{"migrate undo: no backup dir", []string{"migrate", "undo"}, "--backup-dir is required"},
		{"diff: no manifests", []string{"diff"}, "give the manifests to diff with -f or -k"},
		{"diff: bad output", []string{"diff", "-f", "x.yaml", "-o", "table"}, "--output must be one of text, html, sarif, markdown, junit, json"},
		{"diff: bad subresource", []string{"diff", "-f", "x.yaml", "--subresource", "spec"}, "--subresource must be status or scale"},
		{"diff: bad --for", []string{"diff", "-f", "x.yaml", "--for", "kustomize"}, `--for must be argocd, flux or helm, not "kustomize"`},
		{"diff: local without live file", []string{"diff", "-f", "x.yaml", "--local"}, "--local needs the saved live objects"},
		{"diff: helm revision without release", []string{"diff", "-f", "x.yaml", "--helm-revision", "2"}, "--helm-revision goes with --helm-release"},
		{"diff: helm revision with files", []string{"diff", "-f", "x.yaml", "--helm-release", "web", "--helm-revision", "2"}, "--helm-revision picks the manifests of a revision: with -f/-k the manifests are yours"},
		{"diff: negative helm revision", []string{"diff", "--helm-release", "web", "--helm-revision", "-1"}, "--helm-revision must be a revision number, 1 or above, not -1"},
		{"diff: helm revision 0", []string{"diff", "--helm-release", "web", "--helm-revision", "0"}, "--helm-revision must be a revision number, 1 or above, not 0 (without it: the last deployed revision)"},
		{"diff: helm release and local", []string{"diff", "--helm-release", "web", "--local", "--live-file", "l.yaml"}, "--helm-release reads the release from the cluster, --local never contacts one"},
		{"diff: bad helm release name", []string{"diff", "--helm-release", "Web App"}, `--helm-release "Web App" is not a Helm release name`},
		{"diff: helm release name with an underscore", []string{"diff", "--helm-release", "web_app"}, `--helm-release "web_app" is not a Helm release name`},
		{"diff: helm release and subresource", []string{"diff", "--helm-release", "web", "--subresource", "scale"}, "--subresource predicts an apply to one object's subresource: it does not go with --helm-release"},
		{"explain-conflict: csa-upgrade and verify", []string{"explain-conflict", "-f", "x.yaml", "--csa-upgrade", "helm", "--verify"}, "--verify can't check a prediction with --csa-upgrade"},
		{"explain-conflict: csa-upgrade and subresource", []string{"explain-conflict", "-f", "x.yaml", "--csa-upgrade", "helm", "--subresource", "scale"}, "--csa-upgrade moves ownership of the main resource"},
		{"explain-conflict: bad csa-upgrade manager", []string{"explain-conflict", "-f", "x.yaml", "--csa-upgrade", "a\tb"}, "--csa-upgrade: "},
		{"extract: no manager", []string{"extract", "deploy/web"}, "name the field manager with --manager, or give --all-managers"},
		{"extract: all and manager", []string{"extract", "deploy/web", "--all-managers", "--manager", "a"}, "--all-managers extracts every entry"},
		{"extract: bad operation", []string{"extract", "deploy/web", "--manager", "a", "--operation", "Patch"}, "--operation must be Apply or Update"},
		{"extract: bad output", []string{"extract", "deploy/web", "--manager", "a", "-o", "table"}, "--output must be one of json, yaml"},
		{"extract: nothing selected", []string{"extract", "--manager", "a"}, "name the objects"},
		{"extract: schema without local", []string{"extract", "deploy/web", "--manager", "a", "--schema", "crd.yaml"}, "--schema goes with --local"},
		{"audit: bad fail-on", []string{"audit", "--fail-on", "fatal"}, `--fail-on must be one of info, warning, error, never, not "fatal"`},
		{"audit: bad view", []string{"audit", "-o", "tree"}, "--output must be one of table, wide, html, sarif, markdown, junit, json"},
		{"audit: concurrency", []string{"audit", "--concurrency", "0"}, "--concurrency must be at least 1"},
		{"audit: a rule without a sign", []string{"audit", "--rules", "imperative"}, `--rules "imperative": start each rule with + (turn it on) or - (turn it off): --rules=+imperative`},
		{"audit: an unknown rule", []string{"audit", "--rules=+imperative,+adopted-edits"}, `--rules "+adopted-edits": no finding is called "adopted-edits"; the rules are the findings' codes: drift, manual-edit,`},
		{"audit: a rule on and off", []string{"audit", "--rules=+imperative", "--rules=-imperative"}, `--rules "-imperative": imperative is turned both on and off`},
		{"audit: threshold over the limit", []string{"audit", "--last-applied-threshold", "300000"}, "--last-applied-threshold must be between 1 and 262144 bytes"},
		{"audit: allow without expect", []string{"audit", "--allow-manager", "x"}, "--allow-manager goes with --expect-manager"},
		{"audit: empty expected manager", []string{"audit", "--expect-manager="}, "not an empty string"},
		{"audit: context and all contexts", []string{"audit", "--context", "a", "--all-contexts"}, "give --context or --all-contexts, not both"},
		{"audit: names and selector", []string{"audit", "deploy", "web", "-l", "app=web"}, "name cannot be provided when a selector is specified"},
		{"audit: no kubeconfig context", []string{"audit", "--context", "a,b"}, `context "a" is not in the kubeconfig`},
		{"audit: bad selector", []string{"audit", "-A", "-l", "bad selector"}, "-l bad selector: "},
		{"audit: empty context in a list", []string{"audit", "--context", ","}, `--context "," names an empty context`},
		{"audit: context twice", []string{"audit", "--context", "a,a"}, `--context "a,a" names a twice`},
		{"watch: nothing named", []string{"watch"}, "name what to watch"},
		{"watch: two kinds", []string{"watch", "deploy,cm"}, "watch takes one kind"},
		{"watch: many names", []string{"watch", "deploy/a", "deploy/b"}, "watch takes one kind"},
		{"watch: name and selector", []string{"watch", "deploy/web", "-l", "app=web"}, "name cannot be provided when a selector is specified"},
		{"watch: name across namespaces", []string{"watch", "deploy", "web", "-A"}, "cannot be retrieved by name across all namespaces"},
		{"watch: one flip", []string{"watch", "deploy", "--min-flips", "1"}, "--min-flips must be at least 2"},
		{"watch: window", []string{"watch", "deploy", "--window", "0s"}, "--window must be a positive duration"},
		{"watch: no outage allowed", []string{"watch", "deploy", "--max-outage", "0s"}, "--max-outage must be a positive duration, e.g. 2m, not 0s"},
		{"watch: yaml", []string{"watch", "deploy", "-o", "yaml"}, `--output must be text or json (JSON lines), not "yaml"`},
		{"monitor: nothing named", []string{"monitor"}, "name the kinds to monitor"},
		{"monitor: an object", []string{"monitor", "deploy/web"}, "monitor watches whole kinds"},
		{"monitor: names", []string{"monitor", "deploy", "web"}, "monitor watches whole kinds"},
		{"monitor: kinds and all kinds", []string{"monitor", "deploy", "--all-kinds"}, "--all-kinds selects every kind"},
		{"monitor: one flip", []string{"monitor", "deploy", "--min-flips", "1"}, "--min-flips must be at least 2"},
		{"monitor: window", []string{"monitor", "deploy", "--window", "0s"}, "--window must be a positive duration"},
		{"monitor: bad selector", []string{"monitor", "deploy", "-l", "bad selector"}, "is not a label selector"},
		{"monitor: no lease name", []string{"monitor", "deploy", "--leader-elect", "--leader-elect-id="}, "--leader-elect-id must name the Lease"},
		{"unknown command", []string{"blame"}, `unknown command "blame"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, tt.args...)
			if r.code != CodeError {
				t.Errorf("exit %d, want %d", r.code, CodeError)
			}
			if !strings.Contains(r.err, tt.want) {
				t.Errorf("stderr %q does not say %q", r.err, tt.want)
			}
			if r.out != "" {
				t.Errorf("nothing should reach stdout, got %q", r.out)
			}
			if n := strings.Count(r.err, "\n"); n != 1 {
				t.Errorf("want one line of error, got %d: %q", n, r.err)
			}
		})
	}
}

func TestWhoOwnsLocal(t *testing.T) {
	r := run(t, "who-owns", "--local", "-f", deploymentFixture, "-o", "json")
	if r.code != CodeOK {
		t.Fatalf("exit %d: %s", r.code, r.err)
	}
	var rep struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Managers   []struct {
			Manager     string `json:"manager"`
			Subresource string `json:"subresource"`
		} `json:"managers"`
	}
	if err := json.Unmarshal([]byte(r.out), &rep); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, r.out)
	}
	if rep.APIVersion != "ssa.kubectl-ssa.io/v1alpha1" || rep.Kind != "OwnershipReport" || len(rep.Managers) != 5 {
		t.Errorf("got %s %s with %d managers", rep.APIVersion, rep.Kind, len(rep.Managers))
	}

	tests := []struct {
		name string
		args []string
		want string
	}{
		{"jsonpath", []string{"-o", "jsonpath={.managers[*].manager}"}, "platform team-a kubectl kube-controller-manager kubectl-label"},
		{"go-template", []string{"-o", "go-template={{range .managers}}{{.manager}}/{{.subresource}} {{end}}"}, "platform/ team-a/ kubectl/scale kube-controller-manager/status kubectl-label/ "},
		{"table filtered by manager", []string{"--manager", "kubectl-label"}, ".metadata.labels.tier"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, append([]string{"who-owns", "--local", "-f", deploymentFixture}, tt.args...)...)
			if r.code != CodeOK || !strings.Contains(r.out, tt.want) {
				t.Errorf("exit %d, stdout %q, want it to contain %q (stderr %q)", r.code, r.out, tt.want, r.err)
			}
		})
	}
}

func TestWhoOwnsLocalErrors(t *testing.T) {
	tests := []struct {
		name, body, want string
	}{
		{"malformed YAML", "apiVersion: v1\nkind: [\n", "error"},
		{"no kind", "metadata:\n  name: a\n", "error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, "who-owns", "--local", "-f", writeFile(t, "x.yaml", tt.body))
			if r.code != CodeError || !strings.Contains(r.err, tt.want) || r.out != "" {
				t.Errorf("exit %d, stdout %q, stderr %q", r.code, r.out, r.err)
			}
		})
	}
}

func TestExplainConflictLocal(t *testing.T) {
	// platform applies the Deployment; kubectl scale owns .spec.replicas
	// through /scale. Another applier setting replicas conflicts with it.
	conflicting := writeFile(t, "ci.yaml", `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
spec:
  replicas: 7
`)
	r := run(t, "explain-conflict", "--local", "--live-file", deploymentFixture, "-f", conflicting, "--field-manager", "ci", "-o", "json")
	if r.code != CodeFound {
		t.Fatalf("exit %d, want %d (conflict): %s", r.code, CodeFound, r.err)
	}
	var rep struct {
		APIVersion string `json:"apiVersion"`
		Conflicts  []struct {
			Path, Manager, Subresource string
		} `json:"conflicts"`
	}
	if err := json.Unmarshal([]byte(r.out), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.APIVersion != "ssa.kubectl-ssa.io/v1alpha1" || len(rep.Conflicts) != 1 || rep.Conflicts[0].Path != ".spec.replicas" || rep.Conflicts[0].Manager != "kubectl" || rep.Conflicts[0].Subresource != "scale" {
		t.Errorf("got %+v", rep)
	}

	r = run(t, "explain-conflict", "--local", "--live-file", deploymentFixture, "-f", conflicting, "--field-manager", "ci", "--force-conflicts", "-o", "jsonpath={.message}")
	if r.code != CodeOK || r.out != "" {
		t.Errorf("a forced apply succeeds: exit %d, message %q", r.code, r.out)
	}

	text := run(t, "explain-conflict", "--local", "--live-file", deploymentFixture, "-f", conflicting, "--field-manager", "ci", "--context", "prod", "--as", "deployer")
	for _, want := range []string{".spec.replicas", `"kubectl"`,
		// Pasted, every suggestion reaches the same cluster, user and namespace.
		"$ kubectl apply --server-side --force-conflicts --field-manager=ci --context=prod --as=deployer -n shop -f " + conflicting,
		"$ kubectl ssa handover deployment.v1.apps/web --context=prod --as=deployer -n shop --field .spec.replicas --from kubectl --from-subresource scale --to ci",
		"kubectl ssa who-owns deployment.v1.apps/web --context=prod --as=deployer -n shop",
	} {
		if !strings.Contains(text.out, want) {
			t.Errorf("the explanation does not mention %s:\n%s", want, text.out)
		}
	}

	// --for writes the fix as the tool's setting, as data too; without
	// it, an applier's field manager names its tool.
	for _, args := range [][]string{{"--field-manager", "ci", "--for", "argocd"}, {"--field-manager", "argocd-controller"}} {
		r := run(t, append([]string{"explain-conflict", "--local", "--live-file", deploymentFixture, "-f", conflicting, "-o", `jsonpath={.resolutions[?(@.tool=="argocd")].snippet}`}, args...)...)
		want := "spec:\n  ignoreDifferences:\n  - group: apps\n    jqPathExpressions:\n    - .spec.replicas\n    kind: Deployment\n    name: web\n    namespace: shop\n" +
			"  syncPolicy:\n    syncOptions:\n    - ServerSideApply=true\n    - RespectIgnoreDifferences=true\n"
		if r.code != CodeFound || r.out != want {
			t.Errorf("%v: exit %d, snippet\n%s\nwant\n%s", args, r.code, r.out, want)
		}
	}
	// diff points to the explanation with the same --for.
	d := run(t, "diff", "--local", "--live-file", deploymentFixture, "-f", conflicting, "--for", "flux")
	if want := "kubectl ssa explain-conflict -n shop --for=flux -f " + conflicting; !strings.Contains(d.out, want) {
		t.Errorf("diff does not point to %q:\n%s", want, d.out)
	}
}

func TestDiffLocal(t *testing.T) {
	// platform applies the Deployment; kubectl scale owns .spec.replicas
	// through /scale. ci sets replicas and an image: a conflict, and a
	// forced diff.
	m := writeFile(t, "ci.yaml", `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
spec:
  replicas: 7
`)
	r := run(t, "diff", "--local", "--live-file", deploymentFixture, "-f", m, "--field-manager", "ci", "--context", "prod")
	if r.code != CodeFound {
		t.Fatalf("exit %d, want %d: %s", r.code, CodeFound, r.err)
	}
	for _, want := range []string{
		"the apply fails: it conflicts on 1 field (marked !)",
		"kubectl apply --server-side --force-conflicts --field-manager=ci --context=prod -n shop -f " + m,
		"-  replicas: 3  # kubectl (Update /scale",
		"+  replicas: 7  # ci (Apply",
		"stays: fields the manifest does not set",
		"kubectl ssa migrate rename deployment.v1.apps/web --context=prod -n shop --from team-a --field-manager=ci",
	} {
		if !strings.Contains(r.out, want) {
			t.Errorf("the diff does not say %q:\n%s", want, r.out)
		}
	}

	// The same manifest as its own state: nothing changes, exit 0.
	same := run(t, "diff", "--local", "--live-file", deploymentFixture, "-f", m, "--field-manager", "ci", "--force-conflicts", "-o", "jsonpath={.changes[*].change}")
	if same.code != CodeFound || same.out != "modified" {
		t.Errorf("forced: exit %d, changes %q, want one modified", same.code, same.out)
	}
}

func TestExtractLocal(t *testing.T) {
	r := run(t, "extract", "--local", "-f", deploymentFixture, "--manager", "kubectl", "--subresource", "scale")
	want := "# Deployment/shop/web: kubectl (Update, /scale, apps/v1)\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: shop\nspec:\n  replicas: 3\n"
	if r.code != CodeOK || r.out != want {
		t.Errorf("exit %d, got:\n%s\nwant:\n%s\nstderr: %s", r.code, r.out, want, r.err)
	}
	r = run(t, "extract", "--local", "-f", deploymentFixture, "--manager", "nobody")
	if r.code != CodeError || !strings.Contains(r.err, `has no managedFields entry of manager "nobody"; it has: platform (Apply)`) || r.out != "" {
		t.Errorf("exit %d, stdout %q, stderr %q", r.code, r.out, r.err)
	}
	r = run(t, "extract", "--local", "-f", secretFixture, "--all-managers")
	if r.code != CodeOK || strings.Contains(r.out, "czNj") || !strings.Contains(r.out, "<redacted>") {
		t.Errorf("Secret values must be redacted: exit %d\n%s", r.code, r.out)
	}
}

// Flags that contradict each other are refused with one line saying which
// to drop, before anything is read or written: the KUBECONFIG points
// nowhere, and the backup directory is never made.
func TestContradictoryFlags(t *testing.T) {
	backup := filepath.Join(t.TempDir(), "backups")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"migrate: no backup and a backup dir", []string{"migrate", "deploy/web", "--no-backup", "--backup-dir", backup}, "--no-backup writes no backup to --backup-dir: drop one of them"},
		{"migrate: check and a client dry run", []string{"migrate", "deploy/web", "--check", "--dry-run=client"}, "--check writes nothing already: drop --dry-run"},
		{"migrate: check and a server dry run", []string{"migrate", "deploy/web", "--check", "--dry-run=server"}, "--check writes nothing already: drop --dry-run"},
		{"migrate: a dry run and a backup dir", []string{"migrate", "deploy/web", "--dry-run=client", "--backup-dir", backup}, "drop --backup-dir"},
		{"migrate: check and a backup dir", []string{"migrate", "deploy/web", "--check", "--backup-dir", backup}, "drop --backup-dir"},
		{"migrate rename: no backup and a backup dir", []string{"migrate", "rename", "deploy/web", "--from", "a", "--no-backup", "--backup-dir", backup}, "--no-backup writes no backup to --backup-dir"},
		{"handover: negative timeout", []string{"handover", "deploy/web", "--from", "a", "--to", "b", "--field", ".spec.replicas", "--wait", "--timeout", "-5s"}, "--timeout must be a positive duration, e.g. 2m, not -5s"},
		{"handover: zero timeout", []string{"handover", "deploy/web", "--from", "a", "--to", "b", "--field", ".spec.replicas", "--wait", "--timeout", "0s"}, "--timeout must be a positive duration, e.g. 2m, not 0s"},
		{"audit: a character class", []string{"audit", "--expect-manager", "["}, `--expect-manager: "[": a manager glob takes * and ? only, not [...] classes`},
		{"audit: a class in an allowed manager", []string{"audit", "--expect-manager", "argocd-*", "--allow-manager", "flux[12]"}, `--allow-manager: "flux[12]": a manager glob takes * and ? only`},
		{"audit: a glob no manager can match", []string{"audit", "--expect-manager", "ci\x01*"}, "--expect-manager: \"ci\\x01*\" is not a manager name the apiserver takes"},
		{"who-owns: a character class", []string{"who-owns", "deploy/web", "--manager", "team-[ab]"}, `--manager: "team-[ab]": a manager glob takes * and ? only`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, tt.args...)
			if r.code != CodeError {
				t.Errorf("exit %d, want %d", r.code, CodeError)
			}
			if !strings.Contains(r.err, tt.want) {
				t.Errorf("stderr %q does not say %q", r.err, tt.want)
			}
			if n := strings.Count(r.err, "\n"); n != 1 || r.out != "" {
				t.Errorf("want one line of error and nothing on stdout, got %q and %q", r.err, r.out)
			}
			if _, err := os.Stat(backup); !os.IsNotExist(err) {
				t.Errorf("the backup directory was made (%v)", err)
			}
		})
	}
}

// TestHelmDriver: a HELM_DRIVER that keeps nothing in the cluster is
// refused in one line before any request.
func TestHelmDriver(t *testing.T) {
	t.Setenv("HELM_DRIVER", "sql")
	r := run(t, "diff", "--helm-release", "web")
	want := "error: HELM_DRIVER=sql: kubectl-ssa reads the releases Helm keeps in Secrets (HELM_DRIVER=secret, the default) or ConfigMaps (configmap) only\n"
	if r.code != CodeError || r.err != want || r.out != "" {
		t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 and %q", r.code, r.out, r.err, want)
	}
}

// A mistyped command: cobra's suggestions become data, printed by main on
// lines of their own (they were a literal "\n\nDid you mean this?\n\t"
// on the error line).
func TestMistypedCommandSuggestions(t *testing.T) {
	streams, _, _, _ := genericiooptions.NewTestIOStreams()
	root := NewRootCmd(streams)
	root.SetArgs([]string{"audti"})
	err := withSuggestions(root.ExecuteContext(context.Background()))
	var s *SuggestionError
	if !errors.As(err, &s) {
		t.Fatalf("got %T %q, want a SuggestionError", err, err)
	}
	want := &SuggestionError{Msg: `unknown command "audti" for "kubectl ssa"`, Meant: []string{"audit"}}
	if diff := cmp.Diff(want, s); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	plain := errors.New(`unknown command "zzz" for "kubectl ssa"`)
	if got := withSuggestions(plain); got != plain {
		t.Errorf("an error without suggestions became %#v", got)
	}
}
