package e2e

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-ssa/kubectl-ssa/test/testbed"
)

var (
	policyReportsOnce sync.Once
	policyReportGVR   = schema.GroupVersionResource{Group: "wgpolicyk8s.io", Version: "v1alpha2", Resource: "policyreports"}
)

// policyReportCRDs installs the wgpolicyk8s.io CRDs
// (testdata/policyreport, with their provenance).
func policyReportCRDs(t *testing.T) {
	t.Helper()
	policyReportsOnce.Do(func() { installCRDs(t, "policyreport", 2) })
}

// monitorProc is a running kubectl ssa monitor.
type monitorProc struct {
	cmd    *exec.Cmd
	addr   string
	stderr syncBuffer
	done   chan struct{}
	err    error
}

// freeAddr is a loopback address with a port free now.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ln.Close() }()
	return ln.Addr().String()
}

// startMonitor runs kubectl ssa monitor with args, serving on a free
// loopback port, and waits until it is ready.
func startMonitor(t *testing.T, environ []string, args ...string) *monitorProc {
	t.Helper()
	m := &monitorProc{addr: freeAddr(t), done: make(chan struct{})}
	m.cmd = exec.Command("kubectl-ssa", append([]string{"monitor", "--metrics-bind-address", m.addr}, args...)...)
	m.cmd.Env = append(os.Environ(), environ...)
	m.cmd.Stderr = &m.stderr
	if err := m.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { m.err = m.cmd.Wait(); close(m.done) }()
	t.Cleanup(func() {
		_ = m.cmd.Process.Kill()
		<-m.done
	})
	m.waitReady(t, http.StatusOK, 30*time.Second)
	return m
}

// get is the status and body of one of the monitor's endpoints.
func (m *monitorProc) get(path string) (int, string, error) {
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get("http://" + m.addr + path)
	if err != nil {
		return 0, "", err
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// waitReady polls /readyz until it answers status.
func (m *monitorProc) waitReady(t *testing.T, status int, limit time.Duration) {
	t.Helper()
	var last string
	poll(t, limit, func() bool {
		code, body, err := m.get("/readyz")
		last = fmt.Sprintf("%d %q %v", code, body, err)
		return code == status
	}, func() string { return "/readyz: " + last + "\nstderr:\n" + m.stderr.String() })
}

// stop sends SIGTERM and returns the exit code.
func (m *monitorProc) stop(t *testing.T) int {
	t.Helper()
	if err := m.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-m.done:
	case <-time.After(15 * time.Second):
		t.Fatalf("the monitor did not stop within 15 s of SIGTERM\n%s", m.stderr.String())
	}
	var exit *exec.ExitError
	if errors.As(m.err, &exit) {
		return exit.ExitCode()
	}
	if m.err != nil {
		t.Fatal(m.err)
	}
	return 0
}

// poll calls ok until it is true, failing the test with why() after limit.
func poll(t *testing.T, limit time.Duration, ok func() bool, why func() string) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("not within %s: %s", limit, why())
		}
		time.Sleep(250 * time.Millisecond)
	}
}

var sampleLine = regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})? (\S+)$`)
var labelPair = regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"`)

// sample is one series of a scrape.
type sample struct {
	name   string
	labels map[string]string
	value  float64
}

// samples reads Prometheus' text format.
func samples(t *testing.T, text string) []sample {
	t.Helper()
	var out []sample
	for _, l := range strings.Split(text, "\n") {
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		m := sampleLine.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("not a sample line: %q", l)
		}
		v, err := strconv.ParseFloat(m[3], 64)
		if err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		s := sample{name: m[1], labels: map[string]string{}, value: v}
		for _, p := range labelPair.FindAllStringSubmatch(m[2], -1) {
			s.labels[p[1]] = p[2]
		}
		out = append(out, s)
	}
	return out
}

// value is the sum of the series of name whose labels include want.
func value(ss []sample, name string, want map[string]string) float64 {
	sum := 0.0
	for _, s := range ss {
		if s.name != name {
			continue
		}
		match := true
		for k, v := range want {
			if s.labels[k] != v {
				match = false
			}
		}
		if match {
			sum += s.value
		}
	}
	return sum
}

// fightOver makes an applier (force) and a /scale writer alternate on
// replicas until stop is closed.
func fightOver(dyn dynamic.Interface, ns, name, manifest string, wg *sync.WaitGroup, stop chan struct{}, errs chan error) {
	writeLoop(wg, stop, errs, 300*time.Millisecond, func(i int) error {
		if i%2 == 0 {
			_, err := dyn.Resource(deployGVR).Namespace(ns).Patch(context.Background(), name, types.MergePatchType, []byte(`{"spec":{"replicas":5}}`), metav1.PatchOptions{FieldManager: "autoscaler"}, "scale")
			return err
		}
		u := &unstructured.Unstructured{}
		if err := yamlInto(manifest, u); err != nil {
			return err
		}
		_, err := dyn.Resource(deployGVR).Namespace(ns).Apply(context.Background(), name, u, metav1.ApplyOptions{FieldManager: "gitops", Force: true})
		return err
	})
}

// TestMonitor: kubectl ssa monitor, as a process over a namespace, finds
// an ownership fight, hand edits (kubectl edit's patch, kubectl scale
// through /scale) and a forced takeover made by real writes, each within
// 30 s, as metrics (no object's name in a label, promtool check metrics
// clean), Warning Events with their fixes, and PolicyReport results; then
// SIGTERM ends it with exit 0.
func TestMonitor(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Fatal("promtool is needed (make testdeps installs Debian's prometheus package): ", err)
	}
	policyReportCRDs(t)
	ns := namespace(t)
	names := []string{"fought", "edited", "scaled", "taken"}
	manifests := map[string]string{}
	for _, n := range names {
		manifests[n] = strings.Replace(deployment, "name: web", "name: "+n, 1)
		apply(t, ns, "gitops", manifests[n], false)
	}
	m := startMonitor(t, nil, "deployments", "-n", ns, "--policy-report-period", "1s")
	start := time.Now()

	stop, errs := make(chan struct{}), make(chan error, 1)
	var wg sync.WaitGroup
	fightOver(env.dynamic, ns, "fought", manifests["fought"], &wg, stop, errs)
	defer func() {
		select {
		case <-stop:
		default:
			stopWriters(t, stop, &wg, errs)
		}
	}()
	deploys := env.dynamic.Resource(deployGVR).Namespace(ns)
	ctx := context.Background()
	// kubectl edit's write: an Update by kubectl-edit.
	if _, err := deploys.Patch(ctx, "edited", types.MergePatchType, []byte(`{"spec":{"template":{"spec":{"containers":[{"name":"nginx","image":"nginx:1.28"}]}}}}`), metav1.PatchOptions{FieldManager: "kubectl-edit"}); err != nil {
		t.Fatal(err)
	}
	// kubectl scale's: an Update of /scale by kubectl.
	if _, err := deploys.Patch(ctx, "scaled", types.MergePatchType, []byte(`{"spec":{"replicas":4}}`), metav1.PatchOptions{FieldManager: "kubectl"}, "scale"); err != nil {
		t.Fatal(err)
	}
	// Another applier forcing its image.
	apply(t, ns, "ci-deploy", strings.Replace(manifests["taken"], "nginx:1.27", "nginx:1.29", 1), true)

	var scraped string
	var ss []sample
	checks := map[string]func() bool{
		"fight metric": func() bool {
			return value(ss, "kubectl_ssa_fights_total", map[string]string{"namespace": ns, "kind": "Deployment"}) > 0
		},
		"kubectl edit metric": func() bool {
			return value(ss, "kubectl_ssa_manual_edits_total", map[string]string{"namespace": ns, "manager": "kubectl-edit"}) == 1
		},
		"kubectl scale metric": func() bool {
			return value(ss, "kubectl_ssa_manual_edits_total", map[string]string{"namespace": ns, "manager": "kubectl"}) == 1
		},
		"takeover metric": func() bool {
			return value(ss, "kubectl_ssa_forced_takeovers_total", map[string]string{"namespace": ns, "kind": "Deployment", "manager": "ci-deploy"}) == 1
		},
		"manual-edit finding": func() bool {
			return value(ss, "kubectl_ssa_findings", map[string]string{"namespace": ns, "code": "manual-edit", "severity": "warning"}) == 2
		},
		"objects": func() bool { return value(ss, "kubectl_ssa_objects", map[string]string{"kind": "Deployment"}) == 4 },
	}
	events := map[string]string{"fought": "OwnershipFight", "edited": "ManualEdit", "scaled": "ManualEdit", "taken": "ForcedTakeover"}
	results := map[string]string{"fought": "ownership-fight", "edited": "manual-edit", "scaled": "manual-edit", "taken": "forced-takeover"}
	var missing []string
	poll(t, 30*time.Second, func() bool {
		_, scraped, err = m.get("/metrics")
		if err != nil {
			missing = []string{err.Error()}
			return false
		}
		ss = samples(t, scraped)
		missing = nil
		for name, ok := range checks {
			if !ok() {
				missing = append(missing, name)
			}
		}
		missing = append(missing, missingEvents(t, ns, events)...)
		missing = append(missing, missingResults(t, ns, results)...)
		return len(missing) == 0
	}, func() string {
		return fmt.Sprintf("missing %v\nmetrics:\n%s\nstderr:\n%s", missing, grepLines(scraped, "kubectl_ssa_"), m.stderr.String())
	})
	t.Logf("fight, hand edits and takeover seen as metrics, Events and PolicyReport results %s after the monitor started", time.Since(start).Round(time.Millisecond))
	stopWriters(t, stop, &wg, errs)

	for _, s := range ss {
		for k, v := range s.labels {
			for _, n := range names {
				if v == n {
					t.Errorf("%s's label %s is the object name %q", s.name, k, v)
				}
			}
		}
	}
	check := exec.Command(promtool, "check", "metrics")
	check.Stdin = strings.NewReader(scraped)
	if out, err := check.CombinedOutput(); err != nil {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
	if code := m.stop(t); code != 0 {
		t.Errorf("exit %d after SIGTERM, want 0\n%s", code, m.stderr.String())
	}
}

// missingEvents are the Events (object: reason) not recorded yet, each a
// Warning from kubectl-ssa-monitor with a fix in its message.
func missingEvents(t *testing.T, ns string, want map[string]string) []string {
	t.Helper()
	list, err := env.client.CoreV1().Events(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		return []string{err.Error()}
	}
	var out []string
	for name, reason := range want {
		found := false
		for _, e := range list.Items {
			if e.InvolvedObject.Name == name && e.Reason == reason && e.Type == "Warning" &&
				e.Source.Component == "kubectl-ssa-monitor" && strings.Contains(e.Message, "fix: ") {
				found = true
			}
		}
		if !found {
			out = append(out, "event "+reason+" on "+name)
		}
	}
	return out
}

// missingResults are the PolicyReport results (object: policy) not
// written yet, each with its fix.
func missingResults(t *testing.T, ns string, want map[string]string) []string {
	t.Helper()
	rep, err := env.dynamic.Resource(policyReportGVR).Namespace(ns).Get(context.Background(), "kubectl-ssa", metav1.GetOptions{})
	if err != nil {
		return []string{"policy report: " + err.Error()}
	}
	items, _, _ := unstructured.NestedSlice(rep.Object, "results")
	var out []string
	for name, policy := range want {
		found := false
		for _, it := range items {
			r, _ := it.(map[string]any)
			res, _, _ := unstructured.NestedSlice(r, "resources")
			fix, _, _ := unstructured.NestedString(r, "properties", "fix")
			if r["policy"] == policy && r["source"] == "kubectl-ssa" && len(res) == 1 && fix != "" {
				if obj, _ := res[0].(map[string]any); obj["name"] == name {
					found = true
				}
			}
		}
		if !found {
			out = append(out, "result "+policy+" on "+name)
		}
	}
	return out
}

func grepLines(text, prefix string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestMonitorAcrossApiserverRestart: the monitor of a test bed of its own
// rides out the restart of its apiserver (the same cluster, address and
// data): /readyz says so while it is away and is ready again after; a
// fight that starts after the restart is counted; SIGTERM then ends it
// with exit 0.
func TestMonitorAcrossApiserverRestart(t *testing.T) {
	srv, kubeconfig := ownTestbed(t)
	client := kubernetes.NewForConfigOrDie(srv.Config)
	createNamespace(t, client, "restart")
	manifest := strings.Replace(deployment, "name: web", "name: restarted", 1)
	if err := applyWith(dynamic.NewForConfigOrDie(srv.Config), "restart", "gitops", manifest); err != nil {
		t.Fatal(err)
	}
	m := startMonitor(t, []string{"KUBECONFIG=" + kubeconfig}, "deployments", "-A", "--policy-reports=false")
	srv.Stop()
	m.waitReady(t, http.StatusServiceUnavailable, 30*time.Second)
	srv = restartTestbed(t, srv, kubeconfig)
	m.waitReady(t, http.StatusOK, 60*time.Second)
	restarted := time.Now()

	stop, errs := make(chan struct{}), make(chan error, 1)
	var wg sync.WaitGroup
	fightOver(dynamic.NewForConfigOrDie(srv.Config), "restart", "restarted", manifest, &wg, stop, errs)
	var last string
	poll(t, 45*time.Second, func() bool {
		_, body, err := m.get("/metrics")
		last = grepLines(body, "kubectl_ssa_")
		return err == nil && value(samples(t, body), "kubectl_ssa_fights_total", map[string]string{"namespace": "restart"}) > 0
	}, func() string { return "no fight counted after the restart:\n" + last + "\n" + m.stderr.String() })
	stopWriters(t, stop, &wg, errs)
	t.Logf("fight counted %s after the restart", time.Since(restarted).Round(time.Millisecond))
	if code := m.stop(t); code != 0 {
		t.Errorf("exit %d after SIGTERM, want 0\n%s", code, m.stderr.String())
	}
	t.Logf("the monitor's stderr:\n%s", m.stderr.String())
}

func yamlInto(manifest string, u *unstructured.Unstructured) error {
	return yaml.Unmarshal([]byte(manifest), &u.Object)
}

// applyWith applies a manifest by manager, with force, for goroutines
// other than the test's own.
func applyWith(dyn dynamic.Interface, ns, manager, manifest string) error {
	u := &unstructured.Unstructured{}
	if err := yamlInto(manifest, u); err != nil {
		return err
	}
	_, err := dyn.Resource(deployGVR).Namespace(ns).Apply(context.Background(), u.GetName(), u, metav1.ApplyOptions{FieldManager: manager, Force: true})
	return err
}

func createNamespace(t *testing.T, client kubernetes.Interface, name string) {
	t.Helper()
	if _, err := client.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// ownTestbed starts a test bed of the test's own (no controller manager,
// its data kept across a restart) and returns a copy of its kubeconfig.
func ownTestbed(t *testing.T) (*testbed.Server, string) {
	t.Helper()
	srv := startOwnTestbed(t)
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	raw, err := os.ReadFile(srv.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(kubeconfig, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	return srv, kubeconfig
}

// startOwnTestbed starts the test's own test bed (again, after a stop:
// the same data, certificates and address).
func startOwnTestbed(t *testing.T) *testbed.Server {
	t.Helper()
	bin, err := testbed.Binary(repoRoot())
	if err != nil {
		t.Fatal(err)
	}
	srv, err := testbed.Start(bin, ownTestbedOptions(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Stop() })
	return srv
}

var testbedDirs sync.Map

func ownTestbedOptions(t *testing.T) testbed.Options {
	dir, _ := testbedDirs.LoadOrStore(t.Name(), filepath.Join(t.TempDir(), "testbed"))
	return testbed.Options{Dir: dir.(string), NoControllerManager: true, KeepData: true}
}

// restartTestbed starts the stopped test bed again, at the same address.
func restartTestbed(t *testing.T, old *testbed.Server, kubeconfig string) *testbed.Server {
	t.Helper()
	srv := startOwnTestbed(t)
	raw, err := os.ReadFile(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := srv.Config.Host, strings.TrimSpace(hostOf(raw)); got != want || old.Config.Host != want {
		t.Fatalf("restarted at %s, not %s", got, want)
	}
	return srv
}

// TestMonitorFleet: two clusters (the suite's test bed and one of the
// test's own), a monitor in each, and one real Prometheus scraping both
// with a cluster label from its scrape configuration, as a fleet's
// federation or remote-write does: its API returns both clusters' series,
// and the fight in the second cluster only under that cluster.
func TestMonitorFleet(t *testing.T) {
	promBin, err := exec.LookPath("prometheus")
	if err != nil {
		t.Fatal("prometheus is needed (make testdeps installs Debian's prometheus package): ", err)
	}
	ns := namespace(t)
	apply(t, ns, "gitops", deployment, false)
	a := startMonitor(t, nil, "deployments", "-n", ns, "--policy-reports=false", "--events=false")

	srv, kubeconfig := ownTestbed(t)
	createNamespace(t, kubernetes.NewForConfigOrDie(srv.Config), "fleet")
	manifest := strings.Replace(deployment, "name: web", "name: fought", 1)
	dyn := dynamic.NewForConfigOrDie(srv.Config)
	if err := applyWith(dyn, "fleet", "gitops", manifest); err != nil {
		t.Fatal(err)
	}
	b := startMonitor(t, []string{"KUBECONFIG=" + kubeconfig}, "deployments", "-A", "--policy-reports=false", "--events=false")

	prom := startPrometheus(t, promBin, map[string]string{"a": a.addr, "b": b.addr})
	stop, errs := make(chan struct{}), make(chan error, 1)
	var wg sync.WaitGroup
	fightOver(dyn, "fleet", "fought", manifest, &wg, stop, errs)
	var last string
	poll(t, 60*time.Second, func() bool {
		objects, err := prom.query(`kubectl_ssa_objects{kind="Deployment"}`)
		last = fmt.Sprintf("objects %v %v", objects, err)
		if err != nil || objects["a"] != 1 || objects["b"] != 1 {
			return false
		}
		fights, err := prom.query(`sum by (cluster) (kubectl_ssa_fights_total{namespace="fleet"})`)
		last += fmt.Sprintf("; fights %v %v", fights, err)
		return err == nil && fights["b"] > 0 && fights["a"] == 0
	}, func() string { return last + "\nprometheus:\n" + prom.stderr.String() })
	stopWriters(t, stop, &wg, errs)
	for _, m := range []*monitorProc{a, b} {
		if code := m.stop(t); code != 0 {
			t.Errorf("exit %d after SIGTERM, want 0\n%s", code, m.stderr.String())
		}
	}
}

// promProc is a running Prometheus.
type promProc struct {
	addr   string
	stderr syncBuffer
}

// startPrometheus runs Prometheus on loopback, in a temporary directory,
// scraping each target every second with its cluster label.
func startPrometheus(t *testing.T, bin string, targets map[string]string) *promProc {
	t.Helper()
	dir := t.TempDir()
	cfg := "global: {scrape_interval: 1s, evaluation_interval: 1s}\nscrape_configs:\n- job_name: kubectl-ssa-monitor\n  static_configs:\n"
	for cluster, addr := range targets {
		cfg += fmt.Sprintf("  - targets: [%q]\n    labels: {cluster: %q}\n", addr, cluster)
	}
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	p := &promProc{addr: freeAddr(t)}
	cmd := exec.Command(bin, "--config.file="+filepath.Join(dir, "prometheus.yml"), "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+p.addr)
	cmd.Stderr = &p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	})
	return p
}

// query runs an instant query, returning each series' value by its
// cluster label.
func (p *promProc) query(q string) (map[string]float64, error) {
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get("http://" + p.addr + "/api/v1/query?query=" + url.QueryEscape(q))
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	var body struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []struct {
				Metric map[string]string `json:"metric"`
				Value  [2]any            `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return nil, err
	}
	if body.Status != "success" {
		return nil, errors.New(body.Error)
	}
	out := map[string]float64{}
	for _, r := range body.Data.Result {
		s, _ := r.Value[1].(string)
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, err
		}
		out[r.Metric["cluster"]] += v
	}
	return out, nil
}

// TestMonitorLeaderElection: of two replicas with --leader-elect, one
// holds the Lease and monitors; SIGTERM ends it with exit 0 and releases
// the Lease, which the other takes at once; stopped in turn, it leaves
// the Lease free.
func TestMonitorLeaderElection(t *testing.T) {
	ns := namespace(t)
	args := []string{"deployments", "-n", ns, "--policy-reports=false", "--leader-elect", "--leader-elect-namespace", ns, "--leader-elect-id", "mon"}
	first := startMonitor(t, nil, args...)
	poll(t, 30*time.Second, func() bool { return strings.Contains(first.stderr.String(), "holding the lease") },
		func() string { return "the first replica does not lead:\n" + first.stderr.String() })
	second := startMonitor(t, nil, args...)
	holder := func() string {
		l, err := env.client.CoordinationV1().Leases(ns).Get(context.Background(), "mon", metav1.GetOptions{})
		if err != nil || l.Spec.HolderIdentity == nil {
			return ""
		}
		return *l.Spec.HolderIdentity
	}
	leader := holder()
	if leader == "" || strings.Contains(second.stderr.String(), "holding the lease") {
		t.Fatalf("lease held by %q; the second replica says:\n%s", leader, second.stderr.String())
	}
	if code := first.stop(t); code != 0 {
		t.Errorf("exit %d after SIGTERM, want 0\n%s", code, first.stderr.String())
	}
	poll(t, 20*time.Second, func() bool {
		return strings.Contains(second.stderr.String(), "holding the lease") && holder() != "" && holder() != leader
	}, func() string { return "the second replica did not take over:\n" + second.stderr.String() })
	second.waitReady(t, http.StatusOK, 30*time.Second)
	if code := second.stop(t); code != 0 {
		t.Errorf("exit %d after SIGTERM, want 0\n%s", code, second.stderr.String())
	}
	if h := holder(); h != "" {
		t.Errorf("the lease is still held by %q after both stopped", h)
	}
}

// TestMonitorClusterScoped: a hand edit of a cluster-scoped object an
// applier owns is a result of the ClusterPolicyReport kubectl-ssa and an
// Event in the default namespace (where client-go's recorder puts those
// of cluster-scoped objects).
func TestMonitorClusterScoped(t *testing.T) {
	policyReportCRDs(t)
	ns := namespace(t) // a unique name, and a label to select by
	name := "monitored-" + ns
	role := fmt.Sprintf("apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: %s, labels: {test: %s}}\nrules:\n- apiGroups: [apps]\n  resources: [deployments]\n  verbs: [get]\n", name, ns)
	apply(t, "", "gitops", role, false)
	gvr := schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}
	t.Cleanup(func() { _ = env.dynamic.Resource(gvr).Delete(context.Background(), name, metav1.DeleteOptions{}) })
	m := startMonitor(t, nil, "clusterroles", "-l", "test="+ns, "--policy-report-period", "1s")
	if _, err := env.dynamic.Resource(gvr).Patch(context.Background(), name, types.JSONPatchType,
		[]byte(`[{"op":"replace","path":"/rules/0/verbs","value":["get","list"]}]`), metav1.PatchOptions{FieldManager: "kubectl-edit"}); err != nil {
		t.Fatal(err)
	}
	var last []string
	// edited: whether the report holds the hand edit's result.
	edited := func() (bool, error) {
		rep, err := env.dynamic.Resource(schema.GroupVersionResource{Group: "wgpolicyk8s.io", Version: "v1alpha2", Resource: "clusterpolicyreports"}).
			Get(context.Background(), "kubectl-ssa", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		items, _, _ := unstructured.NestedSlice(rep.Object, "results")
		for _, it := range items {
			r, _ := it.(map[string]any)
			res, _, _ := unstructured.NestedSlice(r, "resources")
			if obj, _ := res[0].(map[string]any); r["policy"] == "manual-edit" && obj["name"] == name && obj["kind"] == "ClusterRole" {
				return true, nil
			}
		}
		return false, nil
	}
	poll(t, 30*time.Second, func() bool {
		last = missingEvents(t, "default", map[string]string{name: "ManualEdit"})
		if ok, err := edited(); !ok {
			last = append(last, fmt.Sprintf("no manual-edit result on %s (%v)", name, err))
		}
		return len(last) == 0
	}, func() string { return fmt.Sprintf("%v\n%s", last, m.stderr.String()) })
	if code := m.stop(t); code != 0 {
		t.Errorf("exit %d after SIGTERM, want 0\n%s", code, m.stderr.String())
	}

	// Deleted while no monitor ran: the next one empties the report an
	// earlier run left.
	if err := env.dynamic.Resource(gvr).Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	m = startMonitor(t, nil, "clusterroles", "-l", "test="+ns, "--policy-report-period", "1s")
	poll(t, 30*time.Second, func() bool { ok, err := edited(); return err == nil && !ok },
		func() string { return "the result of the deleted ClusterRole stays\n" + m.stderr.String() })
	if code := m.stop(t); code != 0 {
		t.Errorf("exit %d after SIGTERM, want 0\n%s", code, m.stderr.String())
	}
}

// TestMonitorSecrets: a hand edit of a Secret's value an applier owns
// (kubectl edit writes .data) is reported like any other, and no value of it, plain or base64, is in
// the metrics, the Events, the PolicyReport or the log (the monitor reads
// metadata only).
func TestMonitorSecrets(t *testing.T) {
	policyReportCRDs(t)
	ns := namespace(t)
	apply(t, ns, "gitops", "apiVersion: v1\nkind: Secret\nmetadata: {name: creds}\ndata: {password: "+base64.StdEncoding.EncodeToString([]byte("applied-Pa55word"))+"}\n", false)
	m := startMonitor(t, nil, "secrets", "-n", ns, "--policy-report-period", "1s")
	if _, err := env.client.CoreV1().Secrets(ns).Patch(context.Background(), "creds", types.MergePatchType,
		[]byte(`{"data":{"password":"`+base64.StdEncoding.EncodeToString([]byte("edited-Pa55word"))+`"}}`), metav1.PatchOptions{FieldManager: "kubectl-edit"}); err != nil {
		t.Fatal(err)
	}
	var seen []string
	poll(t, 30*time.Second, func() bool {
		seen = append(missingEvents(t, ns, map[string]string{"creds": "ManualEdit"}), missingResults(t, ns, map[string]string{"creds": "manual-edit"})...)
		return len(seen) == 0
	}, func() string {
		sec, err := env.client.CoreV1().Secrets(ns).Get(context.Background(), "creds", metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		var mf []string
		for _, e := range sec.ManagedFields {
			mf = append(mf, fmt.Sprintf("%s %s %s", e.Manager, e.Operation, e.FieldsV1.String()))
		}
		return fmt.Sprintf("%v\nmanagedFields:\n%s\n%s", seen, strings.Join(mf, "\n"), m.stderr.String())
	})
	_, metrics, err := m.get("/metrics")
	if err != nil {
		t.Fatal(err)
	}
	events, err := env.client.CoreV1().Events(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	report, err := env.dynamic.Resource(policyReportGVR).Namespace(ns).Get(context.Background(), "kubectl-ssa", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if code := m.stop(t); code != 0 {
		t.Errorf("exit %d after SIGTERM, want 0\n%s", code, m.stderr.String())
	}
	all := fmt.Sprintf("%s\n%v\n%v\n%s", metrics, events.Items, report.Object, m.stderr.String())
	for _, v := range []string{"applied-Pa55word", "edited-Pa55word"} {
		for _, form := range []string{v, base64.StdEncoding.EncodeToString([]byte(v))} {
			if strings.Contains(all, form) {
				t.Errorf("the Secret's value %q is in what the monitor wrote", form)
			}
		}
	}
}

// TestMonitorForbiddenKind: an account that may list but not watch a
// named kind is told so at once (one line, exit 2), not served as ready
// while its watch is refused; with --all-kinds such kinds are left out,
// and with none left it stops likewise.
func TestMonitorForbiddenKind(t *testing.T) {
	ns := namespace(t)
	reader := readOnlyKubeconfig(t, ns)
	for _, args := range [][]string{{"configmaps", "-n", ns}, {"--all-kinds", "-n", ns}} {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		cmd := exec.CommandContext(ctx, "kubectl-ssa", append([]string{"monitor", "--metrics-bind-address", freeAddr(t), "--kubeconfig", reader}, args...)...)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		err := cmd.Run()
		late := ctx.Err()
		cancel()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 2 || late != nil {
			t.Errorf("monitor %v: %v, want exit 2 at once\n%s", args, err, stderr.String())
			continue
		}
		if msg := strings.TrimSpace(stderr.String()); !strings.Contains(msg, "watch") || strings.Count(msg, "\n") > 1 {
			t.Errorf("monitor %v: want one line saying what it may not watch, got:\n%s", args, msg)
		}
	}
}
