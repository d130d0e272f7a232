package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestGitOpsWriterMode: an object that helm-controller (or Argo CD)
// wrote client-side, as a HelmRelease upgraded client-side records it
// (an Update), gets fixes for the write that comes next: the
// post-renderer that removes .spec.replicas only with
// spec.upgrade.serverSideApply: enabled (a client-side upgrade would
// delete replicas), and no word of a server-side apply that forces; one
// it applied server-side keeps the plain fix. The snippets hold on the
// tools' CRDs (a strict dry run).
func TestGitOpsWriterMode(t *testing.T) {
	gitopsCRDs(t)
	deploy := func(ns string, replicas int) string {
		return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: %s
  annotations: {meta.helm.sh/release-name: shop, meta.helm.sh/release-namespace: %s}
spec:
  replicas: %d
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: nginx}]
`, ns, ns, replicas)
	}
	// write makes the object as manager by op, then the HPA's
	// controller scales it to 5 through /scale; the next render sets 3.
	write := func(t *testing.T, manager, op string) (ns, file string) {
		ns = namespace(t)
		if op == "Apply" {
			apply(t, ns, manager, deploy(ns, 2), false)
		} else {
			u := parse(t, deploy(ns, 2))
			if _, err := resourceFor(t, u).Create(context.Background(), u, metav1.CreateOptions{FieldManager: manager}); err != nil {
				t.Fatal(err)
			}
		}
		patch(t, parse(t, deploy(ns, 2)), "kube-controller-manager", `{"spec":{"replicas":5}}`, "scale")
		return ns, writeManifest(t, parse(t, deploy(ns, 3)).Object)
	}
	const enabled = "serverSideApply: enabled"
	for _, op := range []string{"Update", "Apply"} {
		t.Run("helm-controller "+op, func(t *testing.T) {
			ns, file := write(t, "helm-controller", op)
			args := []string{"explain-conflict", "-f", file, "--field-manager", "helm-controller", "--for", "flux"}
			text := mustSSA(t, 1, args...).stdout
			data := mustSSA(t, 1, append(args, "-o", "json")...).stdout
			var rep struct {
				ApplierOperation string `json:"applierOperation"`
			}
			if err := json.Unmarshal([]byte(data), &rep); err != nil || rep.ApplierOperation != op {
				t.Errorf("applierOperation %q, want %q (%v)", rep.ApplierOperation, op, err)
			}
			rm := toolFixes(t, args[1:]...)["flux-helmrelease-ignore"]
			checkSnippet(t, ns, rm)
			if !strings.Contains(rm.Snippet, "path: /spec/replicas") {
				t.Errorf("no post-renderer removing replicas:\n%s", rm.Snippet)
			}
			if op == "Update" {
				wants(t, text, `note: "helm-controller" writes this object client-side now`, "upgraded client-side now",
					"the next upgrade would delete these fields (.spec.replicas goes back to its default)", enabled, "keep the two together")
				wants(t, rm.Snippet, enabled)
				if strings.Contains(text, "Helm SDK with server-side apply") || strings.Contains(rm.Summary, "forces its apply") {
					t.Errorf("a client-side writer is said to apply server-side:\n%s", text)
				}
				return
			}
			wants(t, text, "the Helm SDK with server-side apply; it forces conflicts", "The release is upgraded server-side")
			if strings.Contains(text, enabled) || strings.Contains(text, "client-side now") {
				t.Errorf("a server-side writer gets the client-side fix:\n%s", text)
			}
		})
	}
	t.Run("argocd-controller Update", func(t *testing.T) {
		ns, file := write(t, "argocd-controller", "Update")
		rm := toolFixes(t, "-f", file, "--field-manager", "argocd-controller")["argocd-ignore-differences"]
		checkSnippet(t, ns, rm)
		wants(t, rm.Snippet, "ServerSideApply=true", "argocd.argoproj.io/client-side-apply-migration-manager: argocd-controller")
		wants(t, rm.Summary, "client-side now", "keep it with the rest")
	})
}
