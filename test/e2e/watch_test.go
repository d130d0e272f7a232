package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-ssa/kubectl-ssa/test/testbed"
)

var (
	deployGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	churnGVR  = schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "churners"}
)

type fightRecord struct {
	Kind   string `json:"kind"`
	Object struct {
		Kind, Namespace, Name string
	} `json:"object"`
	Path     string `json:"path"`
	Managers []struct {
		Manager     string `json:"manager"`
		Operation   string `json:"operation"`
		Subresource string `json:"subresource"`
		Value       any    `json:"value"`
	} `json:"managers"`
	Values []any `json:"values"`
	Flips  int   `json:"flips"`
}

// watcher is kubectl-ssa watch running in the background.
type watcher struct {
	cmd    *exec.Cmd
	lines  chan string
	stderr syncBuffer
}

// syncBuffer is a bytes.Buffer that can be read while a process writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

func startWatch(t *testing.T, args ...string) *watcher {
	t.Helper()
	return startWatchEnv(t, nil, args...)
}

// startWatchEnv starts the watch with env added to the environment.
func startWatchEnv(t *testing.T, env []string, args ...string) *watcher {
	t.Helper()
	w := &watcher{cmd: exec.Command("kubectl-ssa", append([]string{"watch"}, args...)...), lines: make(chan string, 100)}
	if env != nil {
		w.cmd.Env = append(os.Environ(), env...)
	}
	w.cmd.Stderr = &w.stderr
	out, err := w.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := w.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(w.lines)
		s := bufio.NewScanner(out)
		s.Buffer(make([]byte, 1<<20), 1<<20)
		for s.Scan() {
			w.lines <- s.Text()
		}
	}()
	t.Cleanup(func() { _ = w.cmd.Process.Kill() })
	return w
}

// nextFight is the next fight the watch reports as JSON, nil when none
// comes within d.
func (w *watcher) nextFight(t *testing.T, d time.Duration) *fightRecord {
	t.Helper()
	select {
	case line, ok := <-w.lines:
		if !ok {
			return nil
		}
		var f fightRecord
		if err := json.Unmarshal([]byte(line), &f); err != nil {
			t.Fatalf("not a JSON line: %q", line)
		}
		return &f
	case <-time.After(d):
		return nil
	}
}

// wait returns the exit code once the lines are read.
func (w *watcher) wait(t *testing.T) int {
	t.Helper()
	for range w.lines {
		// drained: the process ends when its output is read
	}
	err := w.cmd.Wait()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode()
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0
}

// applyTry is apply for goroutines other than the test's own.
func applyTry(ns, manager, manifest string) error {
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(manifest), &u.Object); err != nil {
		return err
	}
	u.SetNamespace(ns)
	gvk := u.GroupVersionKind()
	m, err := restMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return err
	}
	_, err = env.dynamic.Resource(m.Resource).Namespace(ns).Apply(context.Background(), u.GetName(), u, metav1.ApplyOptions{FieldManager: manager, Force: true})
	return err
}

// writeLoop runs write every period until stop is closed; the first
// error is kept.
func writeLoop(wg *sync.WaitGroup, stop chan struct{}, errs chan<- error, period time.Duration, write func(i int) error) {
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			if err := write(i); err != nil {
				select {
				case errs <- err:
				default:
				}
				return
			}
			select {
			case <-stop:
				return
			case <-time.After(period):
			}
		}
	}()
}

// stopWriters stops the writeLoops and fails the test if one failed.
func stopWriters(t *testing.T, stop chan struct{}, wg *sync.WaitGroup, errs chan error) {
	t.Helper()
	close(stop)
	wg.Wait()
	select {
	case err := <-errs:
		t.Fatalf("writer: %v", err)
	default:
	}
}

// TestWatchFight: an applier and a /scale writer alternating replicas are
// reported as a fight within 15 s, with both managers and both values.
func TestWatchFight(t *testing.T) {
	ns := namespace(t)
	manifest := strings.Replace(deployment, "name: web", "name: fought", 1)
	d := apply(t, ns, "gitops", manifest, false)

	w := startWatch(t, "deployment/fought", "-n", ns, "-o", "json", "--timeout", "15s")
	start := time.Now()
	stop, errs := make(chan struct{}), make(chan error, 1)
	var wg sync.WaitGroup
	writeLoop(&wg, stop, errs, 300*time.Millisecond, func(i int) error {
		if i%2 == 0 {
			_, err := env.dynamic.Resource(deployGVR).Namespace(ns).Patch(context.Background(), d.GetName(), types.MergePatchType, []byte(`{"spec":{"replicas":5}}`), metav1.PatchOptions{FieldManager: "autoscaler"}, "scale")
			return err
		}
		return applyTry(ns, "gitops", manifest)
	})
	var got *fightRecord
	if line, ok := <-w.lines; ok {
		var f fightRecord
		if err := json.Unmarshal([]byte(line), &f); err != nil {
			t.Fatalf("not a JSON line: %q", line)
		}
		got = &f
	}
	elapsed := time.Since(start)
	stopWriters(t, stop, &wg, errs)
	if got == nil {
		t.Fatalf("no fight reported within 15 s\n%s", w.stderr.String())
	}
	t.Logf("fight reported after %s", elapsed.Round(time.Millisecond))
	if code := w.wait(t); code != 1 {
		t.Errorf("exit %d after a fight, want 1\n%s", code, w.stderr.String())
	}
	var sides []string
	for _, m := range got.Managers {
		sides = append(sides, fmt.Sprintf("%s/%s/%s=%v", m.Manager, m.Operation, m.Subresource, m.Value))
	}
	// Who is first depends on which write the watch saw first.
	sort.Strings(sides)
	values := fmt.Sprint(got.Values)
	if got.Kind != "Fight" || got.Object.Name != "fought" || got.Path != ".spec.replicas" || got.Flips < 3 ||
		strings.Join(sides, " ") != "autoscaler/Update/scale=5 gitops/Apply/=2" || values != "[2 5]" && values != "[5 2]" {
		t.Errorf("fight %+v, sides %v", got, sides)
	}
}

const churnCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: churners.example.com}
spec:
  group: example.com
  names: {kind: Churner, plural: churners, singular: churner}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, properties: {size: {type: string}}}
          status: {type: object, properties: {heartbeat: {type: integer}, phase: {type: string}}}
`

// TestWatchNoFight: a handover, a rollout (with the deployment
// controller's status writes) and a controller's steady status writes are
// not fights.
func TestWatchNoFight(t *testing.T) {
	ns := namespace(t)
	handed := strings.Replace(deployment, "name: web", "name: handed", 1)
	rolled := strings.Replace(deployment, "name: web", "name: rolled", 1)
	apply(t, ns, "gitops", handed, false)
	apply(t, ns, "gitops", rolled, false)
	apply(t, "", "test-setup", churnCRD, true)
	waitEstablished(t, "churners.example.com")
	ch := apply(t, ns, "gitops", `{"apiVersion":"example.com/v1","kind":"Churner","metadata":{"name":"c"},"spec":{"size":"s"}}`, false)

	deploys := startWatch(t, "deployments", "-n", ns, "--timeout", "10s")
	churners := startWatch(t, "churners.example.com", "-n", ns, "--timeout", "10s")
	time.Sleep(time.Second) // both watches have listed

	stop, errs := make(chan struct{}), make(chan error, 3)
	var wg sync.WaitGroup
	// A handover: Argo CD takes over the object, replicas and all, once.
	writeLoop(&wg, stop, errs, time.Hour, func(int) error {
		return applyTry(ns, "argocd-controller", strings.Replace(handed, "replicas: 2", "replicas: 3", 1))
	})
	// A rollout: the applier changes the image, the controller rolls out.
	writeLoop(&wg, stop, errs, 700*time.Millisecond, func(i int) error {
		if i >= 6 {
			return nil
		}
		return applyTry(ns, "gitops", strings.Replace(rolled, "nginx:1.27", fmt.Sprintf("nginx:1.%d", 20+i), 1))
	})
	// Status churn: an operator's heartbeat.
	writeLoop(&wg, stop, errs, 200*time.Millisecond, func(i int) error {
		_, err := env.dynamic.Resource(churnGVR).Namespace(ns).Patch(context.Background(), ch.GetName(), types.MergePatchType,
			[]byte(fmt.Sprintf(`{"status":{"heartbeat":%d,"phase":"p%d"}}`, i, i%3)), metav1.PatchOptions{FieldManager: "operator"}, "status")
		return err
	})
	var lines []string
	for _, w := range []*watcher{deploys, churners} {
		for l := range w.lines {
			lines = append(lines, l)
		}
		if code := w.wait(t); code != 0 {
			t.Errorf("exit %d, want 0\n%s", code, w.stderr.String())
		}
		// Silent on stdout, but it said it was watching.
		if !strings.HasPrefix(w.stderr.String(), "Watching ") || !strings.Contains(w.stderr.String(), " in namespace "+ns+" for 10s for fights") {
			t.Errorf("no start line on stderr: %q", w.stderr.String())
		}
	}
	stopWriters(t, stop, &wg, errs)
	if len(lines) > 0 {
		t.Errorf("fights reported:\n%s", strings.Join(lines, "\n"))
	}
	// The writes did happen.
	if got := get(t, ch); got.Object["status"] == nil {
		t.Error("the status writer wrote nothing")
	}
}

// TestWatchMissingTarget: watching an object or a namespace that does not
// exist is an error, not a quiet "no fight".
func TestWatchMissingTarget(t *testing.T) {
	ns := namespace(t)
	r := ssa(t, "watch", "deploy/nope", "-n", ns, "--timeout", "2s")
	if r.code != 2 || !strings.Contains(r.stderr, `"nope" not found`) || r.stdout != "" {
		t.Errorf("missing object: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = ssa(t, "watch", "deploy", "-n", ns+"-gone", "--timeout", "2s")
	if r.code != 2 || !strings.Contains(r.stderr, `namespace "`+ns+`-gone" not found`) {
		t.Errorf("missing namespace: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestWatchSecretStringDataFight: two appliers alternating a Secret's
// password through stringData (stored in data, which nobody owns) are a
// fight, and the values stay redacted.
func TestWatchSecretStringDataFight(t *testing.T) {
	ns := namespace(t)
	secret := func(pw string) string {
		return `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"db"},"stringData":{"password":"` + pw + `"}}`
	}
	apply(t, ns, "vault", secret("hunter2"), false)
	w := startWatch(t, "secret/db", "-n", ns, "-o", "json", "--timeout", "15s")
	stop, errs := make(chan struct{}), make(chan error, 1)
	var wg sync.WaitGroup
	writeLoop(&wg, stop, errs, 300*time.Millisecond, func(i int) error {
		manager, pw := "vault", "hunter2"
		if i%2 == 0 {
			manager, pw = "eso", "s3cr3t"
		}
		return applyTry(ns, manager, secret(pw))
	})
	line, ok := <-w.lines
	stopWriters(t, stop, &wg, errs)
	if !ok {
		t.Fatalf("no fight reported within 15 s\n%s", w.stderr.String())
	}
	w.wait(t)
	if !strings.Contains(line, `"path":".stringData.password"`) || !strings.Contains(line, "<redacted> #") {
		t.Errorf("fight %s", line)
	}
	for _, leak := range []string{"hunter2", "s3cr3t", "aHVudGVyMg", "czNjcjN0"} {
		if strings.Contains(line, leak) {
			t.Errorf("a secret value (%s) in %s", leak, line)
		}
	}
}

// waitStderr waits up to limit for the watch to write want on stderr.
func (w *watcher) waitStderr(t *testing.T, want string, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !strings.Contains(w.stderr.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("the watch did not say %q within %s; stderr:\n%s", want, limit, w.stderr.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestWatchOutlivesServerRestart: the watch reaches the apiserver through
// an address that goes away and comes back, as an apiserver restarting on
// it does (the open watch breaks, connecting is refused for a while, then
// the same address serves again). The watch says it lost its server and
// how long it was blind, and reports a fight that starts after the
// restart. The rest of the suite talks to the server directly and is not
// disturbed.
func TestWatchOutlivesServerRestart(t *testing.T) {
	ns := namespace(t)
	manifest := strings.Replace(deployment, "name: web", "name: restarted", 1)
	d := apply(t, ns, "gitops", manifest, false)

	server, err := url.Parse(env.config.Host)
	if err != nil {
		t.Fatal(err)
	}
	proxy, err := testbed.NewProxy(server.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	raw, err := os.ReadFile(env.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	through := strings.ReplaceAll(string(raw), server.Host, proxy.Addr)
	if through == string(raw) {
		t.Fatalf("the kubeconfig does not name %s", server.Host)
	}
	if err := os.WriteFile(kubeconfig, []byte(through), 0o600); err != nil {
		t.Fatal(err)
	}

	w := startWatchEnv(t, []string{"KUBECONFIG=" + kubeconfig}, "deployment/restarted", "-n", ns, "-o", "json", "--timeout", "90s", "--max-outage", "60s")
	time.Sleep(2 * time.Second) // it has listed and watches
	proxy.Down()
	w.waitStderr(t, "lost its server", 20*time.Second)
	time.Sleep(3 * time.Second) // a few refused attempts
	if err := proxy.Up(); err != nil {
		t.Fatal(err)
	}
	w.waitStderr(t, "has its server again", 30*time.Second)
	restarted := time.Now()

	stop, errs := make(chan struct{}), make(chan error, 1)
	var wg sync.WaitGroup
	writeLoop(&wg, stop, errs, 300*time.Millisecond, func(i int) error {
		if i%2 == 0 {
			_, err := env.dynamic.Resource(deployGVR).Namespace(ns).Patch(context.Background(), d.GetName(), types.MergePatchType, []byte(`{"spec":{"replicas":5}}`), metav1.PatchOptions{FieldManager: "autoscaler"}, "scale")
			return err
		}
		return applyTry(ns, "gitops", manifest)
	})
	got := w.nextFight(t, 30*time.Second)
	stopWriters(t, stop, &wg, errs)
	if got == nil {
		t.Fatalf("no fight reported within 30 s of the restart\n%s", w.stderr.String())
	}
	t.Logf("fight reported %s after the restart", time.Since(restarted).Round(time.Millisecond))
	if got.Path != ".spec.replicas" || got.Object.Name != "restarted" || len(got.Managers) != 2 {
		t.Errorf("fight %+v", got)
	}
	// Ctrl-C ends it: a fight was seen.
	if err := w.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if code := w.wait(t); code != 1 {
		t.Errorf("exit %d after a fight, want 1\n%s", code, w.stderr.String())
	}
	stderr := w.stderr.String()
	t.Logf("the watch's stderr:\n%s", stderr)
	for _, want := range []string{"connection refused", "blind"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr does not say %q:\n%s", want, stderr)
		}
	}
}
