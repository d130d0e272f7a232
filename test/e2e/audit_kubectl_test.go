package e2e

import (
	"bytes"
	"context"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/rest"
	kubectlscale "k8s.io/kubectl/pkg/cmd/scale"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"
)

// kubectlScale is `kubectl scale TYPE/NAME --replicas=N`: the kubectl
// binary on PATH when there is one (what a person runs), else kubectl's
// own scale command in process under the binary's user agent, which is
// what the apiserver names the /scale write's manager after ("kubectl").
func kubectlScale(t *testing.T, ns, resource string, n int) {
	t.Helper()
	args := []string{"scale", "-n", ns, resource, "--replicas=" + strconv.Itoa(n)}
	if bin, err := exec.LookPath("kubectl"); err == nil {
		cmd := exec.Command(bin, append(args, "--kubeconfig", env.kubeconfig)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return
	}
	cf := genericclioptions.NewConfigFlags(true)
	cf.KubeConfig, cf.Namespace = &env.kubeconfig, &ns
	cf.WrapConfigFn = func(c *rest.Config) *rest.Config {
		c.UserAgent = "kubectl/v1.37.0 (linux/amd64) kubernetes/e2e"
		return c
	}
	var out bytes.Buffer
	streams := genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &out}
	f := cmdutil.NewFactory(cf)
	// Complete, Validate and RunScale are what the command runs, without
	// its os.Exit on error; the command only carries the flags.
	cmd := kubectlscale.NewCmdScale(f, streams)
	(&cobra.Command{Use: "kubectl"}).AddCommand(cmd)
	o := kubectlscale.NewScaleOptions(streams)
	o.Replicas = n
	err := o.Complete(f, cmd, []string{resource})
	if err == nil {
		err = o.Validate()
	}
	if err == nil {
		err = o.RunScale()
	}
	if err != nil {
		t.Fatalf("kubectl scale: %v\n%s", err, out.String())
	}
}

// Issue 35: `audit --expect-manager argocd-controller` said "No findings"
// after a hand `kubectl scale` (replicas 7 against git's 2) while plain
// audit reported it: /scale writers were skipped wholesale. A person's
// /scale write is drift; the autoscaler's (kube-controller-manager) is
// not; the default fix, pasted, lets Argo CD's next sync return the
// declared replicas.
func TestAuditExpectManagerHandScale(t *testing.T) {
	ns := namespace(t)
	apply(t, ns, "argocd-controller", deployment, true)
	kubectlScale(t, ns, "deployment/web", 7)
	if got := replicas(t, ns); got != 7 {
		t.Fatalf("replicas after kubectl scale: %d, want 7", got)
	}
	// The HPA scales through /scale as kube-controller-manager: no drift.
	hpa := apply(t, ns, "argocd-controller", strings.Replace(deployment, "name: web", "name: scaled", 1), true)
	patch(t, hpa, "kube-controller-manager", `{"spec":{"replicas":3}}`, "scale")

	plain := auditJSON(t, 1, "-n", ns, "deployments")
	if diff := cmp.Diff([]string{"Deployment/web manual-edit kubectl (Update /scale) .spec.replicas"}, shorts(plain)); diff != "" {
		t.Errorf("plain audit (-want +got):\n%s", diff)
	}
	rep := auditJSON(t, 1, "-n", ns, "deployments", "--expect-manager", "argocd-controller", "--fail-on", "error")
	if diff := cmp.Diff([]string{"Deployment/web drift kubectl (Update /scale) .spec.replicas"}, shorts(rep)); diff != "" {
		t.Fatalf("--expect-manager (-want +got):\n%s", diff)
	}
	f := rep.Findings[0]
	wantFix := "kubectl ssa handover deployment.v1.apps/web -n " + ns + " --field .spec.replicas --from kubectl --from-subresource scale --to argocd-controller --mode applier"
	if f.Severity != "error" || f.Fix != wantFix {
		t.Errorf("severity %s fix %q; want error and %q", f.Severity, f.Fix, wantFix)
	}
	// Allowed, the hand scale is no drift.
	mustSSA(t, 0, "audit", "-n", ns, "deployments", "--expect-manager", "argocd-controller", "--allow-manager", "kubectl", "--fail-on", "error")

	// The fix, pasted: Argo CD takes replicas at 7, and its next sync
	// sets git's 2.
	args := strings.Fields(f.Fix)[2:]
	mustSSA(t, 0, append(args, "--dry-run=server")...)
	mustSSA(t, 0, args...)
	apply(t, ns, "argocd-controller", deployment, true)
	if got := replicas(t, ns); got != 2 {
		t.Errorf("replicas after the fix and a sync: %d, want git's 2", got)
	}
	if after := auditJSON(t, 0, "-n", ns, "deployments", "--expect-manager", "argocd-controller", "--fail-on", "error"); len(after.Findings) != 0 {
		t.Errorf("findings after the fix: %v", shorts(after))
	}
}

// kubectlRolloutRestart is `kubectl rollout restart TYPE/NAME`: the
// kubectl binary on PATH when there is one, else its write as kubectl
// makes it (the stamp, as "kubectl-rollout").
func kubectlRolloutRestart(t *testing.T, ns, resource string, obj *unstructured.Unstructured) {
	t.Helper()
	if bin, err := exec.LookPath("kubectl"); err == nil {
		cmd := exec.Command(bin, "rollout", "restart", "-n", ns, resource, "--kubeconfig", env.kubeconfig)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("kubectl rollout restart: %v\n%s", err, out)
		}
		return
	}
	patch(t, obj, "kubectl-rollout", `{"spec":{"template":{"metadata":{"annotations":{"kubectl.kubernetes.io/restartedAt":"`+time.Now().UTC().Format(time.RFC3339)+`"}}}}}`)
}

// Issue 35: a kubectl rollout restart was reported twice, on the
// Deployment and on the new ReplicaSet the deployment controller made
// with the stamp copied into its template.
func TestAuditRolloutRestartOnce(t *testing.T) {
	ns := namespace(t)
	d := apply(t, ns, "gitops", deployment, false)
	kubectlRolloutRestart(t, ns, "deployment/web", d)
	// The controller makes the new ReplicaSet, the stamp in its template.
	deadline := time.Now().Add(60 * time.Second)
	for {
		list, err := env.client.AppsV1().ReplicaSets(ns).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		stamped := 0
		for _, rs := range list.Items {
			if rs.Spec.Template.Annotations["kubectl.kubernetes.io/restartedAt"] != "" {
				stamped++
			}
		}
		if stamped > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no ReplicaSet with the restart stamp after 60s (%d ReplicaSets)", len(list.Items))
		}
		time.Sleep(200 * time.Millisecond)
	}
	for _, args := range [][]string{
		{"-n", ns, "deployments,replicasets"},
		{"-n", ns, "deployments,replicasets", "--expect-manager", "gitops"},
	} {
		rep := auditJSON(t, 0, append(args, "--fail-on", "error")...)
		var restarts []string
		for _, f := range rep.Findings {
			if f.Code == "rollout-restart" {
				restarts = append(restarts, f.short())
			}
		}
		if len(restarts) != 1 || !strings.HasPrefix(restarts[0], "Deployment/web rollout-restart kubectl-rollout (Update)") {
			t.Errorf("audit %v: rollout-restart findings %q, want one, of the Deployment by kubectl-rollout", args, restarts)
		}
	}
}
