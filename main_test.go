package main

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// pluginBin is kubectl-ssa for the tests of this file: this test binary,
// which runs main instead of the tests when asPlugin is set in its
// environment. The tests send signals to a real process running main's
// code; building the binary (a link of ten seconds and more) is not what
// they test. (The release binary is tested by the end-to-end tests.)
var pluginBin string

// asPlugin, set to 1 in a process's environment, makes this test binary
// kubectl-ssa.
const asPlugin = "KUBECTL_SSA_TEST_AS_PLUGIN"

func TestMain(m *testing.M) {
	if os.Getenv(asPlugin) == "1" {
		main()
	}
	bin, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	pluginBin = bin
	// Inherited by every process the tests start.
	if err := os.Setenv(asPlugin, "1"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

func plugin(*testing.T) string { return pluginBin }

// started is a running kubectl-ssa whose standard input stays open.
type started struct {
	cmd    *exec.Cmd
	stdin  *os.File
	stderr *bytes.Buffer
	exited chan struct{}
}

// waitRead waits until the process has read everything written to its
// standard input: it then runs its command, its signal handling set up
// (main sets it up first). Sleeping instead raced the process's start on
// a busy machine.
func (s *started) waitRead(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		n, err := unread(s.stdin)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("kubectl-ssa did not read its standard input in a minute; stderr:\n%s", s.stderr)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func start(t *testing.T, bin, kubeconfig string, args ...string) *started {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig, "HOME="+t.TempDir(), "NO_COLOR=1")
	r, stdin, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdin = r
	s := &started{cmd: cmd, stdin: stdin, stderr: &bytes.Buffer{}, exited: make(chan struct{})}
	cmd.Stderr = s.stderr
	err = cmd.Start()
	_ = r.Close()
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = cmd.Wait(); close(s.exited) }()
	t.Cleanup(func() {
		_ = stdin.Close()
		select {
		case <-s.exited:
		default:
			_ = cmd.Process.Kill()
			<-s.exited
		}
	})
	return s
}

// waitExit waits up to limit for the process to exit and returns its
// exit code.
func (s *started) waitExit(t *testing.T, limit time.Duration) int {
	t.Helper()
	select {
	case <-s.exited:
		return s.cmd.ProcessState.ExitCode()
	case <-time.After(limit):
		t.Fatalf("kubectl-ssa %s still runs %s after the signal; stderr:\n%s", strings.Join(s.cmd.Args[1:], " "), limit, s.stderr)
		return 0
	}
}

// Every command stops on the first SIGINT or SIGTERM, also while it waits
// for a standard input that never ends (-f -), with 128+the signal's
// number, as a shell reports it.
func TestSignalStopsCommandReadingStandardInput(t *testing.T) {
	t.Parallel()
	bin := plugin(t)
	nowhere := filepath.Join(t.TempDir(), "no-kubeconfig")
	commands := [][]string{
		{"diff", "-f", "-"},
		{"explain-conflict", "-f", "-"},
		{"who-owns", "--local", "-f", "-"},
		{"extract", "--local", "-f", "-", "--all-managers"},
		{"handover", "-f", "-", "--from", "a", "--to", "b", "--field", ".spec.replicas"},
	}
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		for _, args := range commands {
			t.Run(fmt.Sprintf("%s/%s", sig, args[0]), func(t *testing.T) {
				s := start(t, bin, nowhere, args...)
				// Something arrives, but standard input does not end.
				if _, err := io.WriteString(s.stdin, "apiVersion: v1\nkind: ConfigMap\n"); err != nil {
					t.Fatal(err)
				}
				s.waitRead(t)
				if err := s.cmd.Process.Signal(sig); err != nil {
					t.Fatal(err)
				}
				if code, want := s.waitExit(t, 4*time.Second), 128+int(sig); code != want {
					t.Errorf("exit %d, want %d; stderr:\n%s", code, want, s.stderr)
				}
				if !strings.Contains(s.stderr.String(), "error: interrupted") {
					t.Errorf("stderr does not say it was interrupted:\n%s", s.stderr)
				}
			})
		}
	}
}

// silentServer is a kubeconfig naming a server that accepts connections
// and never answers, and a channel closed once the first is accepted (the
// command then runs, its signal handling set up).
func silentServer(t *testing.T) (string, <-chan struct{}) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	var mu sync.Mutex
	var conns []net.Conn
	connected := make(chan struct{})
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			_ = c.Close()
		}
	})
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c) // held open, never answered
			if len(conns) == 1 {
				close(connected)
			}
			mu.Unlock()
		}
	}()
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	cfg := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: silent, cluster: {server: "http://%s"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: silent, context: {cluster: silent, user: u, namespace: default}}]
current-context: silent
`, l.Addr())
	if err := os.WriteFile(kubeconfig, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return kubeconfig, connected
}

// waitConnected waits until the process has connected to the silent
// server (or exited).
func (s *started) waitConnected(t *testing.T, connected <-chan struct{}) {
	t.Helper()
	select {
	case <-connected:
	case <-s.exited:
		t.Fatalf("kubectl-ssa exited before connecting; stderr:\n%s", s.stderr)
	case <-time.After(time.Minute):
		t.Fatalf("kubectl-ssa did not connect in a minute; stderr:\n%s", s.stderr)
	}
}

// The selection of objects (kubectl's builder, which takes no context)
// stops on the first signal too, well before the grace period: here
// waiting for a server that never answers.
func TestSignalStopsSelection(t *testing.T) {
	t.Parallel()
	bin := plugin(t)
	kubeconfig, connected := silentServer(t)
	s := start(t, bin, kubeconfig, "who-owns", "configmap/x")
	s.waitConnected(t, connected)
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := s.waitExit(t, grace/2); code != 128+int(syscall.SIGTERM) {
		t.Errorf("exit %d, want %d; stderr:\n%s", code, 128+int(syscall.SIGTERM), s.stderr)
	}
}

// startBlockedDiff starts a diff against a server that never answers:
// blocked where its context does not reach (reading which kinds are
// served).
func startBlockedDiff(t *testing.T) *started {
	t.Helper()
	manifest := filepath.Join(t.TempDir(), "cm.yaml")
	if err := os.WriteFile(manifest, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	kubeconfig, connected := silentServer(t)
	s := start(t, plugin(t), kubeconfig, "diff", "-f", manifest)
	s.waitConnected(t, connected)
	return s
}

// A second signal ends a command at once, even one blocked where its
// context does not reach: here diff reading which kinds a server that
// never answers serves.
func TestSecondSignalKills(t *testing.T) {
	t.Parallel()
	s := startBlockedDiff(t)
	if err := s.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	select {
	case <-s.exited:
		t.Fatalf("the first signal already stopped it (exit %d): this test needs a command its context does not reach", s.cmd.ProcessState.ExitCode())
	default:
	}
	if err := s.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	// Well within the grace period the first signal leaves.
	if code := s.waitExit(t, grace/2); code != 128+int(syscall.SIGINT) {
		t.Errorf("exit %d, want %d; stderr:\n%s", code, 128+int(syscall.SIGINT), s.stderr)
	}
}

// After the first signal, a command its context does not reach gets the
// grace period, then the process ends with the signal's code.
func TestGracePeriodEnds(t *testing.T) {
	// Side by side with the others: each mostly waits.
	t.Parallel()
	s := startBlockedDiff(t)
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := s.waitExit(t, 3*grace); code != 128+int(syscall.SIGTERM) {
		t.Errorf("exit %d, want %d; stderr:\n%s", code, 128+int(syscall.SIGTERM), s.stderr)
	}
}

// TestNoCELInTheMainBinary keeps the apiserver's CEL stack out of
// kubectl-ssa: it costs every command about 6 ms and 8 MiB to start, and
// lives in the companion ssa-admission-eval.
func TestNoCELInTheMainBinary(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, "github.com/google/cel-go") || strings.HasPrefix(dep, "k8s.io/apiserver/pkg/admission/plugin") || strings.HasPrefix(dep, "k8s.io/apiserver/pkg/cel") {
			t.Errorf("kubectl-ssa links %s: admission's CEL belongs in cmd/ssa-admission-eval", dep)
		}
	}
}

// A mistyped command, as the user sees it: the error line, then what they
// may have meant on lines of their own, exit 2.
func TestMistypedCommand(t *testing.T) {
	cmd := exec.Command(plugin(t), "audti")
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "NO_COLOR=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	if cmd.ProcessState.ExitCode() != 2 {
		t.Errorf("exit %v, want 2", err)
	}
	want := "error: unknown command \"audti\" for \"kubectl ssa\"\n\nDid you mean this?\n\taudit\n"
	if stderr.String() != want {
		t.Errorf("stderr %q, want %q", stderr.String(), want)
	}
}
