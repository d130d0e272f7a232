// Package e2e runs the built kubectl-ssa binary against a real
// kube-apiserver (with etcd and kube-controller-manager) from the test bed
// in test/cmd/kube-apiserver. One server serves the whole suite; each test
// works in its own namespace.
package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"k8s.io/client-go/rest"

	"github.com/kubectl-ssa/kubectl-ssa/test/testbed"
)

var env struct {
	dir        string // private HOME, PATH and test bed directory
	kubeconfig string
	binDir     string
	plugin     string
	config     *rest.Config
	client     kubernetes.Interface
	dynamic    dynamic.Interface
}

func TestMain(m *testing.M) {
	// Pdeathsig fires when the thread that started the server ends: keep
	// this one for the life of the process.
	runtime.LockOSThread()
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "kubectl-ssa-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = os.RemoveAll(dir) }()
	env.dir = dir
	env.binDir = filepath.Join(dir, "bin")
	if err := os.MkdirAll(env.binDir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}

	bin, err := testbed.Binary(repoRoot())
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: "+err.Error())
		return 1
	}
	env.plugin = filepath.Join(env.binDir, "kubectl-ssa")
	build := exec.Command("go", "build", "-o", env.plugin, ".")
	build.Dir = repoRoot()
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: building kubectl-ssa: "+err.Error())
		return 1
	}
	// Its companion, beside it, as a release ships them.
	build = exec.Command("go", "build", "-o", filepath.Join(env.binDir, "ssa-admission-eval"), "./cmd/ssa-admission-eval")
	build.Dir = repoRoot()
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: building ssa-admission-eval: "+err.Error())
		return 1
	}

	srv, err := testbed.Start(bin, testbed.Options{Dir: filepath.Join(dir, "testbed")})
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: "+err.Error())
		return 1
	}
	defer srv.Stop()
	env.kubeconfig, env.config = srv.Kubeconfig, srv.Config
	env.client = kubernetes.NewForConfigOrDie(srv.Config)
	env.dynamic = dynamic.NewForConfigOrDie(srv.Config)

	// The go builds tests run (helm, ...) keep the user's caches: under the
	// private HOME they would download every module and compile from cold,
	// minutes and gigabytes a run.
	if out, err := exec.Command("go", "env", "GOCACHE", "GOMODCACHE", "GOPATH").Output(); err == nil {
		if v := strings.Split(strings.TrimSpace(string(out)), "\n"); len(v) == 3 {
			_ = os.Setenv("GOCACHE", v[0])
			_ = os.Setenv("GOMODCACHE", v[1])
			_ = os.Setenv("GOPATH", v[2])
		}
	}
	// The plugin sees only the private HOME and KUBECONFIG.
	home := filepath.Join(dir, "home")
	_ = os.MkdirAll(home, 0o700)
	_ = os.Setenv("HOME", home)
	_ = os.Setenv("KUBECONFIG", env.kubeconfig)
	_ = os.Setenv("PATH", env.binDir+string(os.PathListSeparator)+os.Getenv("PATH"))
	_ = os.Unsetenv("NO_COLOR")
	return m.Run()
}

func repoRoot() string {
	wd, _ := os.Getwd()
	return filepath.Clean(filepath.Join(wd, "..", ".."))
}

var nonDNS = regexp.MustCompile(`[^a-z0-9-]+`)

// namespace creates a namespace for the test, waits for its default
// service account, and deletes it at the end.
func namespace(t *testing.T) string {
	t.Helper()
	base := nonDNS.ReplaceAllString(strings.ToLower(t.Name()), "-")
	if len(base) > 40 {
		base = base[:40]
	}
	name := strings.Trim(base, "-") + "-" + rand.String(5)
	ctx := context.Background()
	_, err := env.client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating namespace: %v", err)
	}
	t.Cleanup(func() {
		_ = env.client.CoreV1().Namespaces().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	waitDefaultServiceAccount(t, name, time.Now().Add(30*time.Second))
	return name
}

// waitDefaultServiceAccount waits until the service account controller
// has made ns's default account.
func waitDefaultServiceAccount(t *testing.T, ns string, deadline time.Time) {
	t.Helper()
	for {
		_, err := env.client.CoreV1().ServiceAccounts(ns).Get(context.Background(), "default", metav1.GetOptions{})
		if err == nil {
			return
		}
		if !apierrors.IsNotFound(err) || time.Now().After(deadline) {
			t.Fatalf("waiting for the default service account in %s: %v", ns, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// result of one run of the plugin.
type result struct {
	stdout, stderr string
	code           int
}

// ssa runs kubectl-ssa from the private PATH.
func ssa(t *testing.T, args ...string) result {
	t.Helper()
	return ssaIn(t, "", args...)
}

func ssaIn(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	return ssaRun(t, stdin, nil, args...)
}

// ssaEnv runs kubectl-ssa with more environment variables.
func ssaEnv(t *testing.T, environ []string, args ...string) result {
	t.Helper()
	return ssaRun(t, "", environ, args...)
}

func ssaRun(t *testing.T, stdin string, environ []string, args ...string) result {
	t.Helper()
	cmd := exec.Command("kubectl-ssa", args...)
	if environ != nil {
		cmd.Env = append(os.Environ(), environ...)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	err := cmd.Run()
	code := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatalf("running kubectl-ssa %v: %v", args, err)
	}
	// Every report a test reads matches its published schema (extract
	// prints the objects themselves).
	if len(args) > 0 && args[0] != "extract" {
		validateOutput(t, outputFormat(args), out.String())
	}
	return result{stdout: out.String(), stderr: errb.String(), code: code}
}

// mustSSA runs kubectl-ssa and fails the test unless it exits with want.
func mustSSA(t *testing.T, want int, args ...string) result {
	t.Helper()
	r := ssa(t, args...)
	if r.code != want {
		t.Fatalf("kubectl-ssa %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), r.code, want, r.stdout, r.stderr)
	}
	return r
}
