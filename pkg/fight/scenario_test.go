package fight

import (
	"testing"
	"time"

	"github.com/kubectl-ssa/kubectl-ssa/internal/scenario"
)

const gitopsWeb = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: nginx:1}]}
`

// TestTrackerOnRealManagedFields: a GitOps applier forcing replicas back
// against an autoscaler writing /scale, with managedFields as the
// apiserver's field manager records them, is a fight at the third flip;
// the image, written by the applier alone, never is.
func TestTrackerOnRealManagedFields(t *testing.T) {
	s := &scenario.State{}
	gitops := scenario.Apply{Manager: "argocd-controller", Manifest: gitopsWeb, Force: true}
	hpa := scenario.Update{Manager: "kube-controller-manager", Subresource: "scale", Mutate: scenario.Set(int64(5), "spec", "replicas")}
	tr := New(Options{MinFlips: 3, Window: time.Minute})
	start := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	var flips []int
	for i, op := range []scenario.Op{gitops, hpa, gitops, hpa} {
		s.Run(t, op)
		fs, err := tr.Observe(s.Live, start.Add(time.Duration(i)*10*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range fs {
			if f.Path.String() != ".spec.replicas" {
				t.Errorf("fight over %s", f.Path)
			}
			flips = append(flips, f.Flips)
		}
	}
	if len(flips) != 1 || flips[0] != 3 {
		t.Errorf("fights at flips %v, want one at 3", flips)
	}
}
