package e2e

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
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
