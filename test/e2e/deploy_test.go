package e2e

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// The monitor's deployment (deploy/): the Helm chart rendered by the real
// helm and the kustomize base built by kustomize's own packages, each
// object sent to the test bed as a server-side apply dry run with strict
// field validation; the PrometheusRule's alerts through promtool.

func deployDir() string { return filepath.Join(repoRoot(), "deploy") }

const chartName = "kubectl-ssa-monitor"

// renderChart is `helm template kubectl-ssa-monitor` of the chart in ns.
func renderChart(t *testing.T, ns string, args ...string) []*unstructured.Unstructured {
	t.Helper()
	return renderRelease(t, chartName, ns, args...)
}

func renderRelease(t *testing.T, release, ns string, args ...string) []*unstructured.Unstructured {
	t.Helper()
	out := helmRun(t, append([]string{"template", release, filepath.Join(deployDir(), "chart", chartName), "--namespace", ns}, args...)...)
	return splitDocs(t, []byte(out))
}

// splitDocs parses a multi-document YAML stream, leaving out empty documents.
func splitDocs(t *testing.T, data []byte) []*unstructured.Unstructured {
	t.Helper()
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var objs []*unstructured.Unstructured
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return objs
		}
		if err != nil {
			t.Fatalf("reading YAML: %v", err)
		}
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(doc, &u.Object); err != nil {
			t.Fatalf("parsing YAML: %v\n%s", err, doc)
		}
		if len(u.Object) > 0 {
			objs = append(objs, u)
		}
	}
}

// dryRunAll sends each object as a server-side apply dry run that refuses
// unknown and duplicate fields (tryDryRunStrict).
func dryRunAll(t *testing.T, objs []*unstructured.Unstructured) {
	t.Helper()
	for _, u := range objs {
		if _, err := tryDryRunStrict(t, u); err != nil {
			t.Errorf("%s %s/%s: server dry run with strict validation: %v", u.GetKind(), u.GetNamespace(), u.GetName(), err)
		}
	}
}

func kindsOf(objs []*unstructured.Unstructured) []string {
	var kinds []string
	for _, u := range objs {
		kinds = append(kinds, u.GetKind()+"/"+u.GetName())
	}
	return kinds
}

func find(t *testing.T, objs []*unstructured.Unstructured, kind string) *unstructured.Unstructured {
	t.Helper()
	for _, u := range objs {
		if u.GetKind() == kind {
			return u
		}
	}
	t.Fatalf("no %s among %v", kind, kindsOf(objs))
	return nil
}

// container is the monitor's container of the Deployment in objs.
func container(t *testing.T, objs []*unstructured.Unstructured) map[string]any {
	t.Helper()
	cs, _, _ := unstructured.NestedSlice(find(t, objs, "Deployment").Object, "spec", "template", "spec", "containers")
	if len(cs) != 1 {
		t.Fatalf("want one container, got %d", len(cs))
	}
	return cs[0].(map[string]any)
}

func argsOf(c map[string]any) []string {
	a, _, _ := unstructured.NestedStringSlice(c, "args")
	return a
}

func TestDeployChartDryRun(t *testing.T) {
	ns := namespace(t)
	rbacNarrow := `[{"apiGroups":["apps"],"resources":["deployments","deployments/scale"],"verbs":["get","list","watch"]},{"apiGroups":[""],"resources":["configmaps"],"verbs":["get","list","watch"]}]`
	cases := []struct {
		name      string
		args      []string
		wantKinds []string
		wantArgs  []string
		wantRules int
	}{{
		name: "default values",
		args: []string{"--include-crds"},
		wantKinds: []string{
			"CustomResourceDefinition/clusterpolicyreports.wgpolicyk8s.io", "CustomResourceDefinition/policyreports.wgpolicyk8s.io",
			"ServiceAccount/" + chartName, "ClusterRole/" + chartName, "ClusterRoleBinding/" + chartName,
			"Role/" + chartName + "-leader-election", "RoleBinding/" + chartName + "-leader-election",
			"Service/" + chartName, "Deployment/" + chartName,
		},
		wantArgs:  []string{"monitor", "--all-kinds", "--all-namespaces", "--metrics-bind-address=:8080", "--leader-elect=true", "--events=true", "--policy-reports=true"},
		wantRules: 4,
	}, {
		name: "two kinds in one namespace, no election, no Events",
		args: []string{
			"--set", "monitor.kinds={deployments,configmaps}", "--set", "monitor.namespace=" + ns, "--set", "monitor.selector=team=a",
			"--set", "leaderElection.enabled=false", "--set", "monitor.events=false", "--set-json", "rbac.rules=" + rbacNarrow,
			"--set", "monitor.extraArgs={--window=5m}", "--set", "image.digest=sha256:" + strings.Repeat("ab", 32),
		},
		wantKinds: []string{"ServiceAccount/" + chartName, "ClusterRole/" + chartName, "ClusterRoleBinding/" + chartName, "Service/" + chartName, "Deployment/" + chartName},
		wantArgs:  []string{"monitor", "deployments,configmaps", "--namespace=" + ns, "--selector=team=a", "--metrics-bind-address=:8080", "--leader-elect=false", "--events=false", "--policy-reports=true", "--window=5m"},
		wantRules: 3,
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			objs := renderChart(t, ns, c.args...)
			if diff := cmp.Diff(c.wantKinds, kindsOf(objs)); diff != "" {
				t.Errorf("objects (-want +got):\n%s", diff)
			}
			ctr := container(t, objs)
			if diff := cmp.Diff(c.wantArgs, argsOf(ctr)); diff != "" {
				t.Errorf("monitor's args (-want +got):\n%s", diff)
			}
			rules, _, _ := unstructured.NestedSlice(find(t, objs, "ClusterRole").Object, "rules")
			if len(rules) != c.wantRules {
				t.Errorf("ClusterRole has %d rules, want %d: %v", len(rules), c.wantRules, rules)
			}
			checkHardened(t, objs, ctr)
			dryRunAll(t, objs)
		})
	}
}

// checkHardened: non-root (the image's uid), read-only root file system,
// no privilege escalation, every capability dropped, resources set.
func checkHardened(t *testing.T, objs []*unstructured.Unstructured, ctr map[string]any) {
	t.Helper()
	pod := find(t, objs, "Deployment").Object
	for path, want := range map[string]any{
		"spec.template.spec.securityContext.runAsNonRoot": true,
		"spec.template.spec.securityContext.runAsUser":    "65532",
	} {
		got, _, _ := unstructured.NestedFieldNoCopy(pod, strings.Split(path, ".")...)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s = %v, want %v", path, got, want)
		}
	}
	for path, want := range map[string]any{
		"securityContext.readOnlyRootFilesystem":   true,
		"securityContext.allowPrivilegeEscalation": false,
		"resources.limits.memory":                  "256Mi",
		"resources.requests.cpu":                   "10m",
	} {
		got, _, _ := unstructured.NestedFieldNoCopy(ctr, strings.Split(path, ".")...)
		if got != want {
			t.Errorf("container %s = %v, want %v", path, got, want)
		}
	}
	if drop, _, _ := unstructured.NestedStringSlice(ctr, "securityContext", "capabilities", "drop"); !slices.Equal(drop, []string{"ALL"}) {
		t.Errorf("capabilities dropped: %v, want [ALL]", drop)
	}
}

// TestDeployChartRBACIsEnough: the chart's ServiceAccount and RBAC,
// created for real, are all the monitor needs. It runs with the chart's
// arguments under that ServiceAccount's token (its Lease in the release's
// namespace, as in the pod), lists, finds a hand edit, and writes the
// Warning Event and the PolicyReport, with no request forbidden.
func TestDeployChartRBACIsEnough(t *testing.T) {
	policyReportCRDs(t)
	ns := namespace(t)
	objs := renderRelease(t, ns, ns, "--set", "monitor.kinds={configmaps}", "--set", "monitor.namespace="+ns,
		"--set-json", `rbac.rules=[{"apiGroups":[""],"resources":["configmaps"],"verbs":["get","list","watch"]}]`,
		"--set", "monitor.extraArgs={--policy-report-period=1s}")
	ctx := context.Background()
	for _, u := range objs {
		if u.GetKind() == "Deployment" || u.GetKind() == "Service" {
			continue
		}
		r := resourceFor(t, u)
		if _, err := r.Apply(ctx, u.GetName(), u, metav1.ApplyOptions{FieldManager: "helm", Force: true}); err != nil {
			t.Fatalf("creating %s/%s: %v", u.GetKind(), u.GetName(), err)
		}
		if u.GetNamespace() == "" {
			t.Cleanup(func() { _ = r.Delete(context.Background(), u.GetName(), metav1.DeleteOptions{}) })
		}
	}
	sa := find(t, objs, "ServiceAccount").GetName()
	tok, err := env.client.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["testbed"] = &clientcmdapi.Cluster{Server: env.config.Host, CertificateAuthorityData: env.config.CAData, CertificateAuthority: env.config.CAFile}
	cfg.AuthInfos["monitor"] = &clientcmdapi.AuthInfo{Token: tok.Status.Token}
	cfg.Contexts["monitor"] = &clientcmdapi.Context{Cluster: "testbed", AuthInfo: "monitor"}
	cfg.CurrentContext = "monitor"
	if err := clientcmd.WriteToFile(*cfg, kubeconfig); err != nil {
		t.Fatal(err)
	}
	// The chart's arguments but its bind address: startMonitor's, on loopback.
	var args []string
	for _, a := range argsOf(container(t, objs))[1:] {
		if !strings.HasPrefix(a, "--metrics-bind-address") {
			args = append(args, a)
		}
	}
	apply(t, ns, "gitops", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {mode: blue}\n", false)
	m := startMonitor(t, []string{"KUBECONFIG=" + kubeconfig, "POD_NAMESPACE=" + ns}, args...)
	// kubectl edit's write over the applier's field.
	if _, err := env.client.CoreV1().ConfigMaps(ns).Patch(ctx, "settings", types.MergePatchType, []byte(`{"data":{"mode":"green"}}`), metav1.PatchOptions{FieldManager: "kubectl-edit"}); err != nil {
		t.Fatal(err)
	}
	var missing []string
	poll(t, 30*time.Second, func() bool {
		missing = append(missingEvents(t, ns, map[string]string{"settings": "ManualEdit"}), missingResults(t, ns, map[string]string{"settings": "manual-edit"})...)
		return len(missing) == 0
	}, func() string { return fmt.Sprintf("missing %v\nstderr:\n%s", missing, m.stderr.String()) })
	if _, err := env.client.CoordinationV1().Leases(ns).Get(ctx, "kubectl-ssa-monitor", metav1.GetOptions{}); err != nil {
		t.Errorf("the Lease in the release's namespace: %v", err)
	}
	if code := m.stop(t); code != 0 || strings.Contains(strings.ToLower(m.stderr.String()), "forbidden") {
		t.Errorf("the monitor under the chart's RBAC: exit %d, stderr:\n%s", code, m.stderr.String())
	}
}

// TestDeployChartPrometheusObjects: the ServiceMonitor and PrometheusRule
// appear only when asked for (the test bed has no prometheus-operator
// CRDs, so they are not sent to it), the rule holds deploy/prometheus's
// groups unchanged, and the job it alerts on is the one the ServiceMonitor
// names.
func TestDeployChartPrometheusObjects(t *testing.T) {
	objs := renderChart(t, "monitoring", "--set", "serviceMonitor.enabled=true", "--set", "prometheusRule.enabled=true",
		"--set", "prometheusRule.labels.release=kube-prometheus-stack", "--set", "serviceMonitor.cluster=eu-1")
	want := []string{"ServiceAccount/" + chartName, "ClusterRole/" + chartName, "ClusterRoleBinding/" + chartName,
		"Role/" + chartName + "-leader-election", "RoleBinding/" + chartName + "-leader-election",
		"Service/" + chartName, "Deployment/" + chartName, "PrometheusRule/" + chartName, "ServiceMonitor/" + chartName}
	if diff := cmp.Diff(want, kindsOf(objs)); diff != "" {
		t.Errorf("objects (-want +got):\n%s", diff)
	}
	raw, err := os.ReadFile(filepath.Join(deployDir(), "prometheus", "rules.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var groups map[string]any
	if err := yaml.Unmarshal(raw, &groups); err != nil {
		t.Fatal(err)
	}
	rule := find(t, objs, "PrometheusRule")
	if diff := cmp.Diff(groups, rule.Object["spec"]); diff != "" {
		t.Errorf("PrometheusRule's spec is not rules.yaml (-want +got):\n%s", diff)
	}
	if rule.GetLabels()["release"] != "kube-prometheus-stack" {
		t.Errorf("PrometheusRule labels: %v", rule.GetLabels())
	}
	sm := find(t, objs, "ServiceMonitor").Object
	relabel, _, _ := unstructured.NestedSlice(sm, "spec", "endpoints")
	if diff := cmp.Diff([]any{map[string]any{"targetLabel": "cluster", "replacement": "eu-1"}}, relabel[0].(map[string]any)["relabelings"]); diff != "" {
		t.Errorf("the ServiceMonitor's cluster label (-want +got):\n%s", diff)
	}
	jobLabel, _, _ := unstructured.NestedString(sm, "spec", "jobLabel")
	if job := find(t, objs, "Service").GetLabels()[jobLabel]; job != "kubectl-ssa-monitor" || !strings.Contains(string(raw), `job="`+job+`"`) {
		t.Errorf("the ServiceMonitor's job is %q (service label %q): the alerts select job=%q", job, jobLabel, "kubectl-ssa-monitor")
	}
}

// kustomizeBuild builds the kustomization in dir with kustomize's own packages.
func kustomizeBuild(t *testing.T, dir string) []*unstructured.Unstructured {
	t.Helper()
	m, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		t.Fatalf("kustomize build %s: %v", dir, err)
	}
	out, err := m.AsYaml()
	if err != nil {
		t.Fatal(err)
	}
	return splitDocs(t, out)
}

// TestDeployKustomizeMatchesChart: the base holds the chart's objects for
// its default values, field for field.
func TestDeployKustomizeMatchesChart(t *testing.T) {
	base := kustomizeBuild(t, filepath.Join(deployDir(), "kustomize", "base"))
	chart := renderChart(t, "kubectl-ssa")
	byName := func(objs []*unstructured.Unstructured) map[string]map[string]any {
		m := map[string]map[string]any{}
		for _, u := range objs {
			m[u.GetKind()+"/"+u.GetName()] = u.Object
		}
		return m
	}
	if diff := cmp.Diff(byName(chart), byName(base)); diff != "" {
		t.Errorf("kustomize base differs from the chart's default render (-chart +base):\n%s", diff)
	}
}

// TestDeployKustomizeOverlayDryRun: an overlay that moves the base to
// another namespace (as users do) passes the strict dry run, the bindings
// following it.
func TestDeployKustomizeOverlayDryRun(t *testing.T) {
	ns := namespace(t)
	overlay := t.TempDir()
	rel, err := filepath.Rel(overlay, filepath.Join(deployDir(), "kustomize", "base"))
	if err != nil {
		t.Fatal(err)
	}
	k := "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nnamespace: " + ns + "\nresources:\n  - " + rel + "\n"
	if err := os.WriteFile(filepath.Join(overlay, "kustomization.yaml"), []byte(k), 0o644); err != nil {
		t.Fatal(err)
	}
	objs := kustomizeBuild(t, overlay)
	for _, u := range objs {
		subjects, _, _ := unstructured.NestedSlice(u.Object, "subjects")
		for _, s := range subjects {
			if got := s.(map[string]any)["namespace"]; got != ns {
				t.Errorf("%s/%s binds the ServiceAccount of namespace %v, want %s", u.GetKind(), u.GetName(), got, ns)
			}
		}
	}
	crds := kustomizeBuild(t, filepath.Join(deployDir(), "crds"))
	if len(crds) != 2 {
		t.Errorf("deploy/crds builds %v, want the two PolicyReport CRDs", kindsOf(crds))
	}
	dryRunAll(t, append(crds, objs...))
}

// TestPrometheusRules: promtool checks the alert rules and runs their unit
// tests (deploy/prometheus/rules_test.yaml). make testdeps installs promtool.
func TestPrometheusRules(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Fatalf("promtool is not on the PATH (make testdeps installs it): %v", err)
	}
	dir := filepath.Join(deployDir(), "prometheus")
	for _, args := range [][]string{{"check", "rules", "rules.yaml"}, {"test", "rules", "rules_test.yaml"}} {
		cmd := exec.Command(promtool, args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// TestFleetExamples: docs/fleet.md's example manifests. Each ```yaml block
// parses; Kubernetes objects name their apiVersion, kind and name, and
// Flux's Kustomization and HelmRelease pass the strict dry run against
// Flux's published CRDs (testdata/gitops-crds); Prometheus configurations
// pass promtool check config. The ApplicationSet and GitRepository are
// only parsed: their CRDs are not in the test bed.
func TestFleetExamples(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Fatalf("promtool is not on the PATH (make testdeps installs it): %v", err)
	}
	gitopsCRDs(t)
	ns := namespace(t)
	raw, err := os.ReadFile(filepath.Join(repoRoot(), "docs", "fleet.md"))
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	promConfigs := 0
	for i, block := range yamlBlocks(string(raw)) {
		for _, u := range splitDocs(t, []byte(block)) {
			if _, ok := u.Object["global"]; ok {
				promConfigs++
				checkPromConfig(t, promtool, block)
				continue
			}
			if u.GetAPIVersion() == "" || u.GetKind() == "" || u.GetName() == "" {
				t.Errorf("block %d: an object without apiVersion, kind or name: %v", i, u.Object)
				continue
			}
			kinds = append(kinds, u.GetKind())
			if strings.HasSuffix(u.GroupVersionKind().Group, ".toolkit.fluxcd.io") && u.GetKind() != "GitRepository" {
				u.SetNamespace(ns)
				dryRunAll(t, []*unstructured.Unstructured{u})
			}
		}
	}
	if diff := cmp.Diff([]string{"ApplicationSet", "Kustomization", "GitRepository", "HelmRelease"}, kinds); diff != "" || promConfigs != 2 {
		t.Errorf("docs/fleet.md's examples (-want +got):\n%s\nPrometheus configurations: %d, want 2", diff, promConfigs)
	}
}

// yamlBlocks are the contents of a Markdown text's ```yaml blocks.
func yamlBlocks(md string) []string {
	var blocks []string
	var cur *strings.Builder
	for _, l := range strings.Split(md, "\n") {
		switch {
		case cur == nil && strings.TrimSpace(l) == "```yaml":
			cur = &strings.Builder{}
		case cur != nil && strings.TrimSpace(l) == "```":
			blocks = append(blocks, cur.String())
			cur = nil
		case cur != nil:
			cur.WriteString(l + "\n")
		}
	}
	return blocks
}

func checkPromConfig(t *testing.T, promtool, config string) {
	t.Helper()
	f := filepath.Join(t.TempDir(), "prometheus.yml")
	if err := os.WriteFile(f, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(promtool, "check", "config", f).CombinedOutput(); err != nil {
		t.Errorf("promtool check config:\n%s\n%v\n%s", config, err, out)
	}
}
