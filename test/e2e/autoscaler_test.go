package e2e

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// An HPA (made at autoscaling/v1, as kubectl autoscale makes it) scales a
// Deployment; a manifest that sets replicas is told which HPA owns them,
// with its bounds, and pointed to handover.
func TestExplainConflictNamesTheAutoscaler(t *testing.T) {
	ns := namespace(t)
	apply(t, ns, "platform", csaDeployment, false)
	apply(t, ns, "kubectl-autoscale", `{"apiVersion":"autoscaling/v1","kind":"HorizontalPodAutoscaler","metadata":{"name":"app-hpa"},
		"spec":{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"app"},"minReplicas":2,"maxReplicas":9,"targetCPUUtilizationPercentage":80}}`, false)
	file := filepath.Join(t.TempDir(), "d.json")
	writeFile(t, file, csaDeployment)
	res := ssa(t, "explain-conflict", "-n", ns, "-f", file, "--field-manager", "platform", "-o", "json")
	if res.code > 1 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	var r struct {
		Autoscalers []struct {
			Name                     string
			MinReplicas, MaxReplicas int64
		} `json:"autoscalers"`
	}
	if err := json.Unmarshal([]byte(res.stdout), &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Autoscalers) != 1 || r.Autoscalers[0].Name != "app-hpa" || r.Autoscalers[0].MinReplicas != 2 || r.Autoscalers[0].MaxReplicas != 9 {
		t.Errorf("autoscalers %+v", r.Autoscalers)
	}
	text := ssa(t, "explain-conflict", "-n", ns, "-f", file, "--field-manager", "platform", "--color", "never")
	for _, want := range []string{"HorizontalPodAutoscaler app-hpa (min 2, max 9) scales this object", "$ kubectl ssa handover deployment.v1.apps/app -n " + ns + " --field .spec.replicas --from platform --to kube-controller-manager"} {
		if !strings.Contains(text.stdout, want) {
			t.Errorf("the explanation lacks %q:\n%s", want, text.stdout)
		}
	}
}

// The story of issue 18: kubectl apply (client-side) with replicas 2,
// kubectl autoscale --min=4, then explain-conflict. Its note must start
// the handover from client-side apply (whose last-applied annotation still
// holds replicas), not from the autoscaler to itself; pasted (as a server
// dry run, then for real), it leaves the next apply of the manifest
// without replicas, client-side and server-side, nothing to reset.
func TestAutoscalerAdviceAfterClientSideApply(t *testing.T) {
	ns := namespace(t)
	file := filepath.Join(t.TempDir(), "web.yaml")
	manifest := strings.Replace(hpaDeployment, "replicas: 1", "replicas: 2", 1)
	writeFile(t, file, manifest)
	kubectlApply(t, ns, manifest)
	d := webRef(ns)
	apply(t, ns, "kubectl-autoscale", `{"apiVersion":"autoscaling/v1","kind":"HorizontalPodAutoscaler","metadata":{"name":"web"},
		"spec":{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"web"},"minReplicas":4,"maxReplicas":8,"targetCPUUtilizationPercentage":80}}`, false)
	for deadline := time.Now().Add(60 * time.Second); replicas(t, ns) != 4; time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the autoscaler did not scale to 4: replicas %d", replicas(t, ns))
		}
	}

	res := ssa(t, "explain-conflict", "-n", ns, "-f", file, "--color", "never")
	if res.code != 1 {
		t.Fatalf("explain-conflict: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	want := "$ kubectl ssa handover deployment.v1.apps/web -n " + ns + " --field .spec.replicas --from kubectl-client-side-apply --to kube-controller-manager"
	var pasted []string
	for _, line := range strings.Split(res.stdout, "\n") {
		if cmdline, ok := strings.CutPrefix(strings.TrimSpace(line), "$ kubectl ssa handover "); ok && strings.Contains(cmdline, "--to kube-controller-manager") {
			pasted = append(pasted, cmdline)
		}
	}
	if !strings.Contains(res.stdout, want) || len(pasted) != 1 {
		t.Fatalf("want the note's one handover to be %q, got %q:\n%s", want, pasted, res.stdout)
	}
	if strings.Contains(res.stdout, "--from kube-controller-manager") {
		t.Errorf("a suggestion takes replicas from the autoscaler:\n%s", res.stdout)
	}
	args := append([]string{"handover"}, strings.Fields(pasted[0])...)
	before := get(t, d).GetResourceVersion()
	if r := handoverJSON(t, 0, append(args, "--dry-run=server")...); r.Status != "planned" {
		t.Errorf("server dry run: status %q steps %s", r.Status, stepNames(r))
	}
	if r := handoverJSON(t, 0, args...); r.Status != "completed" {
		t.Errorf("handover: status %q steps %s", r.Status, stepNames(r))
	}
	if after := get(t, d); after.GetResourceVersion() == before {
		t.Error("the handover wrote nothing")
	} else if strings.Contains(after.GetAnnotations()["kubectl.kubernetes.io/last-applied-configuration"], `"replicas"`) {
		t.Errorf("the last-applied annotation still holds replicas: %s", after.GetAnnotations()["kubectl.kubernetes.io/last-applied-configuration"])
	}
	assertOwners(t, whoOwnsJSON(t, "-n", ns, "deploy/web"), ".spec.replicas", "kube-controller-manager/Update/scale")

	// The manifest without replicas: the next client-side apply, then a
	// server-side one, leave the autoscaler's 4 alone.
	noReplicas := strings.Replace(manifest, "  replicas: 2\n", "", 1)
	kubectlApply(t, ns, noReplicas)
	if got := replicas(t, ns); got != 4 {
		t.Errorf("after kubectl apply (client-side): replicas %d, want 4", got)
	}
	apply(t, ns, "kubectl", noReplicas, false)
	if got := replicas(t, ns); got != 4 {
		t.Errorf("after a server-side apply: replicas %d, want 4", got)
	}
}
