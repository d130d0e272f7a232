package e2e

import (
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
)

// TestWatchAcrossApiserverRestart: a watch of a test bed of its own rides
// out the restart of its apiserver (the process stopped, then the same
// cluster started again at the same address: its etcd data, certificates
// and ports) and reports a fight that starts after it, saying how long it
// was blind.
func TestWatchAcrossApiserverRestart(t *testing.T) {
	srv, kubeconfig := ownTestbed(t)
	createNamespace(t, kubernetes.NewForConfigOrDie(srv.Config), "restart")
	manifest := strings.Replace(deployment, "name: web", "name: restarted", 1)
	if err := applyWith(dynamic.NewForConfigOrDie(srv.Config), "restart", "gitops", manifest); err != nil {
		t.Fatal(err)
	}
	w := startWatchEnv(t, []string{"KUBECONFIG=" + kubeconfig}, "deployment/restarted", "-n", "restart", "-o", "json", "--timeout", "150s", "--max-outage", "120s")
	time.Sleep(2 * time.Second) // it has listed and watches
	srv.Stop()
	w.waitStderr(t, "lost its server", 30*time.Second)
	srv = restartTestbed(t, srv, kubeconfig)
	w.waitStderr(t, "has its server again", 60*time.Second)
	restarted := time.Now()

	stop, errs := make(chan struct{}), make(chan error, 1)
	var wg sync.WaitGroup
	fightOver(dynamic.NewForConfigOrDie(srv.Config), "restart", "restarted", manifest, &wg, stop, errs)
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
