package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-ssa/kubectl-ssa/test/testbed"
)

// TestWatchAcrossApiserverRestart: a watch of a test bed of its own rides
// out the restart of its apiserver (the process stopped, then the same
// cluster started again at the same address: its etcd data, certificates
// and ports) and reports a fight that starts after it, saying how long it
// was blind.
func TestWatchAcrossApiserverRestart(t *testing.T) {
	bin, err := testbed.Binary(repoRoot())
	if err != nil {
		t.Fatal(err)
	}
	opts := testbed.Options{Dir: filepath.Join(t.TempDir(), "testbed"), NoControllerManager: true, KeepData: true}
	srv, err := testbed.Start(bin, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if srv != nil {
			srv.Stop()
		}
	}()
	client := kubernetes.NewForConfigOrDie(srv.Config)
	ctx := context.Background()
	if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "restart"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	manifest := strings.Replace(deployment, "name: web", "name: restarted", 1)
	applyTo := func(dyn dynamic.Interface, manager string) error {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(manifest), &u.Object); err != nil {
			return err
		}
		_, err := dyn.Resource(deployGVR).Namespace("restart").Apply(ctx, "restarted", u, metav1.ApplyOptions{FieldManager: manager, Force: true})
		return err
	}
	if err := applyTo(dynamic.NewForConfigOrDie(srv.Config), "gitops"); err != nil {
		t.Fatal(err)
	}
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	raw, err := os.ReadFile(srv.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(kubeconfig, raw, 0o600); err != nil {
		t.Fatal(err)
	}

	w := startWatchEnv(t, []string{"KUBECONFIG=" + kubeconfig}, "deployment/restarted", "-n", "restart", "-o", "json", "--timeout", "150s", "--max-outage", "120s")
	time.Sleep(2 * time.Second) // it has listed and watches
	srv.Stop()
	w.waitStderr(t, "lost its server", 30*time.Second)
	if srv, err = testbed.Start(bin, opts); err != nil {
		t.Fatal(err)
	}
	if got, want := srv.Config.Host, strings.TrimSpace(hostOf(raw)); got != want {
		t.Fatalf("restarted at %s, not %s", got, want)
	}
	w.waitStderr(t, "has its server again", 60*time.Second)
	restarted := time.Now()

	dyn := dynamic.NewForConfigOrDie(srv.Config)
	stop, errs := make(chan struct{}), make(chan error, 1)
	var wg sync.WaitGroup
	writeLoop(&wg, stop, errs, 300*time.Millisecond, func(i int) error {
		if i%2 == 0 {
			_, err := dyn.Resource(deployGVR).Namespace("restart").Patch(ctx, "restarted", types.MergePatchType, []byte(`{"spec":{"replicas":5}}`), metav1.PatchOptions{FieldManager: "autoscaler"}, "scale")
			return err
		}
		return applyTo(dyn, "gitops")
	})
	got := w.nextFight(t, 45*time.Second)
	stopWriters(t, stop, &wg, errs)
	if got == nil {
		t.Fatalf("no fight reported within 45 s of the restart\n%s", w.stderr.String())
	}
	t.Logf("fight reported %s after the restart", time.Since(restarted).Round(time.Millisecond))
	if got.Path != ".spec.replicas" || got.Object.Name != "restarted" || len(got.Managers) != 2 {
		t.Errorf("fight %+v", got)
	}
	if err := w.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if code := w.wait(t); code != 1 {
		t.Errorf("exit %d after a fight, want 1\n%s", code, w.stderr.String())
	}
	stderr := w.stderr.String()
	t.Logf("the watch's stderr:\n%s", stderr)
	if !strings.Contains(stderr, "blind") {
		t.Errorf("stderr does not say how long the watch was blind:\n%s", stderr)
	}
}

// hostOf is the server a kubeconfig names.
func hostOf(kubeconfig []byte) string {
	for _, l := range strings.Split(string(kubeconfig), "\n") {
		if s, ok := strings.CutPrefix(strings.TrimSpace(l), "server: "); ok {
			return s
		}
	}
	return ""
}
