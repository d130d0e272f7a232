package e2e

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Commands over many objects stop on a signal between two objects: the
// built binary gets a real SIGTERM or SIGINT halfway through a few hundred
// ConfigMaps, exits 143 or 130 with one line saying where it stopped (not
// a line per object left), and every object is either done or untouched.

// configMaps applies n ConfigMaps sig-000... labelled sig=1, by manager,
// a few at a time.
func configMaps(t *testing.T, ns, manager string, n int) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	next := make(chan int)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				u := &unstructured.Unstructured{Object: map[string]any{
					"apiVersion": "v1", "kind": "ConfigMap",
					"metadata": map[string]any{"name": fmt.Sprintf("sig-%03d", i), "namespace": ns, "labels": map[string]any{"sig": "1"}},
					"data":     map[string]any{"a": "1", "b": "2"},
				}}
				if _, err := env.dynamic.Resource(cmGVR).Namespace(ns).Apply(context.Background(), u.GetName(), u, metav1.ApplyOptions{FieldManager: manager}); err != nil {
					errs <- err
				}
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("creating the ConfigMaps: %v", err)
	}
}

// running is a kubectl-ssa started in the background, its standard error
// read line by line.
type running struct {
	cmd    *exec.Cmd
	stdout bytes.Buffer
	mu     sync.Mutex
	lines  []string
	exited chan struct{}
}

func startSSA(t *testing.T, environ []string, args ...string) *running {
	t.Helper()
	r := &running{cmd: exec.Command("kubectl-ssa", args...), exited: make(chan struct{})}
	r.cmd.Env = append(os.Environ(), environ...)
	r.cmd.Stdout = &r.stdout
	stderr, err := r.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	read := make(chan struct{})
	go func() {
		defer close(read)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			r.mu.Lock()
			r.lines = append(r.lines, sc.Text())
			r.mu.Unlock()
		}
	}()
	go func() { <-read; _ = r.cmd.Wait(); close(r.exited) }()
	t.Cleanup(func() {
		select {
		case <-r.exited:
		default:
			_ = r.cmd.Process.Kill()
			<-r.exited
		}
	})
	return r
}

// stderrLines are the lines read so far.
func (r *running) stderrLines() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string{}, r.lines...)
}

// waitFor waits until cond holds, failing the test after limit or if the
// command ended first.
func (r *running) waitFor(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		select {
		case <-r.exited:
			t.Fatalf("kubectl-ssa ended before %s (exit %d); stderr:\n%s", what, r.cmd.ProcessState.ExitCode(), strings.Join(r.stderrLines(), "\n"))
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s within %s; stderr:\n%s", what, limit, strings.Join(r.stderrLines(), "\n"))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// signal sends sig and returns the exit code and the error lines.
func (r *running) signal(t *testing.T, sig syscall.Signal) (int, []string) {
	t.Helper()
	select {
	case <-r.exited:
		t.Fatalf("ended (exit %d) before %s; stderr:\n%s", r.cmd.ProcessState.ExitCode(), sig, strings.Join(r.stderrLines(), "\n"))
	default:
	}
	if err := r.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	select {
	case <-r.exited:
	case <-time.After(20 * time.Second):
		t.Fatalf("still running 20 s after %s; stderr:\n%s", sig, strings.Join(r.stderrLines(), "\n"))
	}
	var errs []string
	for _, l := range r.stderrLines() {
		if strings.Contains(l, "error:") || strings.Contains(l, "context canceled") {
			errs = append(errs, l)
		}
	}
	return r.cmd.ProcessState.ExitCode(), errs
}

// wantOneStopLine checks the exit code and that the one error line says
// where the command stopped.
func wantOneStopLine(t *testing.T, code, want int, errs []string, pattern string) {
	t.Helper()
	if code != want {
		t.Errorf("exit %d, want %d", code, want)
	}
	if len(errs) != 1 || !regexp.MustCompile(pattern).MatchString(errs[0]) {
		t.Errorf("want one line matching %q, got %d:\n%s", pattern, len(errs), strings.Join(errs, "\n"))
	}
}

// owners are the managers of .data.a of each ConfigMap sig-*.
func owners(t *testing.T, ns string) map[string][]string {
	t.Helper()
	list, err := env.dynamic.Resource(cmGVR).Namespace(ns).List(context.Background(), metav1.ListOptions{LabelSelector: "sig=1"})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, cm := range list.Items {
		if v, _, _ := unstructured.NestedString(cm.Object, "data", "a"); v != "1" {
			t.Errorf("%s: .data.a is %q, want 1 (a value changed)", cm.GetName(), v)
		}
		var ms []string
		for _, e := range cm.GetManagedFields() {
			if e.FieldsV1 != nil && strings.Contains(e.FieldsV1.GetRawString(), `"f:a"`) {
				ms = append(ms, e.Manager)
			}
		}
		out[cm.GetName()] = ms
	}
	return out
}

func TestSignalStopsHandover(t *testing.T) {
	ns := namespace(t)
	const n = 300
	configMaps(t, ns, "ci", n)
	args := []string{"handover", "cm", "-l", "sig=1", "-n", ns, "--field", ".data.a", "--from", "ci", "--to", "argocd"}
	r := startSSA(t, nil, args...)
	released := func() bool {
		k := 0
		for _, l := range r.stderrLines() {
			if strings.Contains(l, ": release (ci) done") {
				k++
			}
		}
		return k >= 20
	}
	r.waitFor(t, 2*time.Minute, "20 objects handed over", released)
	code, errs := r.signal(t, syscall.SIGTERM)
	wantOneStopLine(t, code, 143, errs, `^error: interrupted \(terminated\): handover stopped (at|before) ConfigMap/`+ns+`/sig-\d+, object \d+ of 300 \(\d+ done`)

	// Every object is handed over or untouched: none is shared by both.
	done, untouched := 0, 0
	for name, ms := range owners(t, ns) {
		switch strings.Join(ms, ",") {
		case "argocd":
			done++
		case "ci":
			untouched++
		default:
			t.Errorf("%s: .data.a owned by %v: half handed over", name, ms)
		}
	}
	if done < 20 || untouched == 0 {
		t.Errorf("%d handed over, %d untouched: the signal did not land halfway", done, untouched)
	}
	// The same command finishes the rest.
	mustSSA(t, 0, append(args, "-o", "json")...)
	for name, ms := range owners(t, ns) {
		if strings.Join(ms, ",") != "argocd" {
			t.Errorf("%s: .data.a owned by %v after running again", name, ms)
		}
	}
}

func TestSignalStopsMigrate(t *testing.T) {
	ns := namespace(t)
	const n = 300
	configMaps(t, ns, "ci", n)
	backup := filepath.Join(t.TempDir(), "backup")
	backups := func() int {
		k := 0
		_ = filepath.WalkDir(backup, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(p, ".json") {
				k++
			}
			return nil
		})
		return k
	}
	r := startSSA(t, nil, "migrate", "rename", "cm", "-l", "sig=1", "-n", ns, "--from", "ci", "--field-manager", "kubectl", "--concurrency", "2", "--backup-dir", backup, "-o", "json")
	r.waitFor(t, 2*time.Minute, "10 backups", func() bool { return backups() >= 10 })
	code, errs := r.signal(t, syscall.SIGINT)
	wantOneStopLine(t, code, 130, errs, `^error: interrupted \(interrupt\): migrate stopped after \d+ objects \(\d+ migrated, 0 failed; each one begun was finished\)`)

	// Every object is migrated, with its backup, or untouched, without.
	migrated, untouched := 0, 0
	for name, ms := range owners(t, ns) {
		_, err := os.Stat(filepath.Join(backup, "core.v1.configmaps", ns, name+".json"))
		switch m := strings.Join(ms, ","); {
		case m == "kubectl" && err == nil:
			migrated++
		case m == "ci" && os.IsNotExist(err):
			untouched++
		default:
			t.Errorf("%s: .data.a owned by %v, backup: %v", name, ms, err)
		}
	}
	if migrated < 10 || untouched == 0 || backups() != migrated {
		t.Errorf("%d migrated, %d untouched, %d backups", migrated, untouched, backups())
	}
	// The report printed holds the objects migrated.
	if !strings.Contains(r.stdout.String(), `"kind": "MigrationReport"`) {
		t.Errorf("no report of what was done:\n%.2000s", r.stdout.String())
	}
}

// slowProxy forwards to the apiserver, delaying each chunk of its answers,
// so that listing every kind takes long enough to be interrupted.
func slowProxy(t *testing.T, delay time.Duration) string {
	t.Helper()
	server, err := url.Parse(env.config.Host)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer func() { _ = c.Close() }()
				s, err := net.Dial("tcp", server.Host)
				if err != nil {
					return
				}
				defer func() { _ = s.Close() }()
				go func() { _, _ = io.Copy(s, c) }()
				buf := make([]byte, 4096)
				for {
					k, err := s.Read(buf)
					if k > 0 {
						time.Sleep(delay)
						if _, err := c.Write(buf[:k]); err != nil {
							return
						}
					}
					if err != nil {
						return
					}
				}
			}()
		}
	}()
	raw, err := os.ReadFile(env.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(strings.ReplaceAll(string(raw), server.Host, l.Addr().String())), 0o600); err != nil {
		t.Fatal(err)
	}
	return kubeconfig
}

func TestSignalStopsAudit(t *testing.T) {
	ns := namespace(t)
	configMaps(t, ns, "ci", 300)
	kubeconfig := slowProxy(t, 100*time.Millisecond)
	r := startSSA(t, []string{"KUBECONFIG=" + kubeconfig}, "audit", "-A", "--fail-on", "never")
	// It reads discovery, then lists some fifty kinds, each answer
	// delayed: well past this.
	time.Sleep(1500 * time.Millisecond)
	code, errs := r.signal(t, syscall.SIGINT)
	wantOneStopLine(t, code, 130, errs, `^error: interrupted \(interrupt\)`)
	if r.stdout.Len() > 0 {
		t.Errorf("a stopped audit printed a report:\n%.2000s", r.stdout.String())
	}
}
