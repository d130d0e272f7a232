// Package testbed starts the test bed: a real kube-apiserver with an
// embedded etcd and (unless told otherwise) kube-controller-manager, built
// from k8s.io/kubernetes by test/cmd/kube-apiserver. The e2e suite and the
// demo start it through Start; the bench/ scripts start the same binary
// from the shell and read the same "ready KUBECONFIG=" line.
package testbed

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// ReadyPrefix starts the line the server prints on stdout once it serves.
const ReadyPrefix = "ready KUBECONFIG="

// Binary returns the test bed executable: $SSA_TESTBED_BIN, or the one
// "make testbed" built in the repository at root. A test never builds it
// (a cold build takes about 10 minutes): when it is missing, the error
// says which make target builds it.
func Binary(root string) (string, error) {
	if p := os.Getenv("SSA_TESTBED_BIN"); p != "" {
		return p, nil
	}
	cmd := exec.Command("make", "-s", "testbed-path")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("make testbed-path: %w", err)
	}
	path := strings.TrimSpace(string(out))
	if _, err := os.Stat(path); err != nil {
		return "", fmt.Errorf("the test bed apiserver %s is not built: run make testbed (about 10 minutes the first time) or make test-e2e, which builds it first", path)
	}
	return path, nil
}

// Options tune Start.
type Options struct {
	// Dir holds etcd's data, the certificates, the kubeconfig and
	// server.log.
	Dir string
	// NoControllerManager leaves kube-controller-manager out.
	NoControllerManager bool
	// Detach lets the server outlive the process that started it;
	// otherwise it gets SIGTERM when the starting thread ends (callers
	// keep it with runtime.LockOSThread).
	Detach bool
	// Timeout bounds the wait until ready (default 3 minutes).
	Timeout time.Duration
	// KeepData restarts the cluster Dir holds (its etcd data,
	// certificates and ports): started again after Stop, the apiserver
	// is the same cluster at the same address.
	KeepData bool
}

// Server is a running test bed.
type Server struct {
	Kubeconfig string
	// Config is the client configuration, with a rate limit fit for
	// tests that write many objects.
	Config *rest.Config
	cmd    *exec.Cmd
	log    *os.File
	exited chan struct{}
}

// Start starts the test bed and waits until it serves.
func Start(bin string, o Options) (*Server, error) {
	if o.Timeout == 0 {
		o.Timeout = 3 * time.Minute
	}
	if err := os.MkdirAll(o.Dir, 0o700); err != nil {
		return nil, err
	}
	logf, err := os.Create(filepath.Join(o.Dir, "server.log"))
	if err != nil {
		return nil, err
	}
	args := []string{"--testbed-dir", o.Dir}
	if o.NoControllerManager {
		args = append(args, "--no-controller-manager")
	}
	if o.KeepData {
		args = append(args, "--keep-data")
	}
	cmd := exec.Command(bin, args...)
	cmd.Stderr = logf
	if !o.Detach {
		// If the caller dies without stopping it (a panic, a timeout),
		// the server goes with it.
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &Server{cmd: cmd, log: logf, exited: make(chan struct{})}
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if kc, ok := strings.CutPrefix(sc.Text(), ReadyPrefix); ok {
				ready <- kc
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	go func() { _ = cmd.Wait(); close(s.exited) }()
	select {
	case s.Kubeconfig = <-ready:
	case <-s.exited:
		_ = logf.Close()
		return nil, fmt.Errorf("the test bed exited before it was ready; %s", s.LogTail())
	case <-time.After(o.Timeout):
		s.Stop()
		return nil, fmt.Errorf("the test bed was not ready in %s; %s", o.Timeout, s.LogTail())
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", s.Kubeconfig)
	if err != nil {
		s.Stop()
		return nil, err
	}
	cfg.QPS, cfg.Burst = 200, 400
	s.Config = cfg
	return s, nil
}

// PID is the server's process ID.
func (s *Server) PID() int { return s.cmd.Process.Pid }

// Stop ends the server by its PID: SIGTERM, then SIGKILL after 20 s.
func (s *Server) Stop() {
	select {
	case <-s.exited:
	default:
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.exited:
		case <-time.After(20 * time.Second):
			_ = s.cmd.Process.Kill()
			<-s.exited
		}
	}
	_ = s.log.Close()
}

// LogTail is the end of server.log, for error messages.
func (s *Server) LogTail() string {
	b, _ := os.ReadFile(s.log.Name())
	if len(b) > 3000 {
		b = b[len(b)-3000:]
	}
	return "log tail (" + s.log.Name() + "):\n" + string(b)
}
