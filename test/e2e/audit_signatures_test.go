package e2e

import (
	"context"
	"encoding/json"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

// signatureFinding is a finding with the evidence of this year's
// incidents.
type signatureFinding struct {
	auditFinding
	Message   string `json:"message"`
	Reference string `json:"reference"`
	Evidence  *struct {
		Entries []struct {
			Manager   string `json:"manager"`
			Operation string `json:"operation"`
			Fields    int    `json:"fields"`
		} `json:"entries"`
		Bookkeeping []struct {
			Kind  string `json:"kind"`
			Key   string `json:"key"`
			Value string `json:"value"`
			Tool  string `json:"tool"`
		} `json:"bookkeeping"`
		Applier string   `json:"applier"`
		List    string   `json:"list"`
		Shared  []string `json:"shared"`
		Rule    string   `json:"rule"`
	} `json:"evidence"`
	Fixes []struct {
		Mode    string `json:"mode"`
		Command string `json:"command"`
	} `json:"fixes"`
}

func signatureAudit(t *testing.T, want int, args ...string) map[string]signatureFinding {
	t.Helper()
	out := mustSSA(t, want, append([]string{"audit", "-o", "json"}, args...)...).stdout
	var rep struct {
		Findings []signatureFinding `json:"findings"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("decoding the AuditReport: %v\n%s", err, out)
	}
	byShort := map[string]signatureFinding{}
	for _, f := range rep.Findings {
		byShort[f.short()] = f
	}
	return byShort
}

func keys(m map[string]signatureFinding) []string {
	out := []string{}
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// runFix runs a finding's pasteable fix (its quoted paths hold no
// spaces), with more flags.
func runFix(t *testing.T, fix string, more ...string) result {
	t.Helper()
	words := strings.Fields(strings.ReplaceAll(fix, "'", ""))
	if len(words) < 3 || words[0] != "kubectl" || words[1] != "ssa" {
		t.Fatalf("not a kubectl-ssa command: %q", fix)
	}
	return mustSSA(t, 0, append(words[2:], more...)...)
}

// jsonPatch sends a JSON patch as manager.
func jsonPatch(t *testing.T, obj *unstructured.Unstructured, manager, patchJSON string) *unstructured.Unstructured {
	t.Helper()
	out, err := resourceFor(t, obj).Patch(context.Background(), obj.GetName(), types.JSONPatchType, []byte(patchJSON), metav1.PatchOptions{FieldManager: manager})
	if err != nil {
		t.Fatalf("JSON patch by %s: %v", manager, err)
	}
	return out
}

// create is a POST as manager (kubectl create, a Helm 3 install).
func create(t *testing.T, ns, manager, manifest string) *unstructured.Unstructured {
	t.Helper()
	u := parse(t, manifest)
	setNamespace(t, u, ns)
	out, err := resourceFor(t, u).Create(context.Background(), u, metav1.CreateOptions{FieldManager: manager})
	if err != nil {
		t.Fatalf("create by %s: %v", manager, err)
	}
	return out
}

// tryApply is a server-side apply whose error the test reads.
func tryApply(t *testing.T, ns, manager, manifest string, force bool) (*unstructured.Unstructured, error) {
	t.Helper()
	u := parse(t, manifest)
	setNamespace(t, u, ns)
	return resourceFor(t, u).Apply(context.Background(), u.GetName(), u, metav1.ApplyOptions{FieldManager: manager, Force: force})
}

const (
	wipedArgo = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"wiped","annotations":{"argocd.argoproj.io/tracking-id":"shop:/ConfigMap:shop/wiped"}},"data":{"x":"1"}}`
	wipedHelm = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"wiped-helm","labels":{"app.kubernetes.io/managed-by":"Helm"},"annotations":{"meta.helm.sh/release-name":"shop"}},"data":{"x":"1"}}`
	chart     = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"release"},"data":{"x":"1","y":"2"}}`
	webSvc    = `{"apiVersion":"v1","kind":"Service","metadata":{"name":"web"},"spec":{"selector":{"app":"web"},"ports":[{"name":"http","port":80,"protocol":"TCP","targetPort":8080}]}}`
)

// TestAuditSignatures reproduces each incident signature with the writes
// that make it in real clusters, checks what audit says of it (codes,
// evidence, exit codes), shows the trouble it causes, then runs the fix
// audit names and shows the applier's next apply succeed with no value
// reset.
func TestAuditSignatures(t *testing.T) {
	ns := namespace(t)
	ctx := context.Background()

	// managed-fields-wiped: an Argo CD object and a Helm release's, whose
	// managedFields are cleared (what a failing conversion webhook did
	// before 1.37, kubernetes#136919) by the documented JSON patch.
	wiped := apply(t, ns, "argocd-controller", wipedArgo, true)
	jsonPatch(t, wiped, "conversion", `[{"op":"replace","path":"/metadata/managedFields","value":[{}]}]`)
	helmWiped := apply(t, ns, "helm", wipedHelm, false)
	jsonPatch(t, helmWiped, "conversion", `[{"op":"replace","path":"/metadata/managedFields","value":[{}]}]`)
	// An Update records nothing on such an object.
	patch(t, wiped, "kubectl-label", `{"metadata":{"labels":{"team":"a"}}}`)
	if mf := get(t, wiped).GetManagedFields(); len(mf) != 0 {
		t.Fatalf("managedFields after the reset and an update: %v", mf)
	}

	// update-and-apply: a Helm 3 install (create) and upgrade (replace)
	// by "helm", then a Helm 4 upgrade (apply) of a chart without the
	// annotation.
	rel := create(t, ns, "helm", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"release","annotations":{"legacy":"yes"}},"data":{"x":"1"}}`)
	if err := unstructured.SetNestedField(rel.Object, "2", "data", "y"); err != nil {
		t.Fatal(err)
	}
	if _, err := resourceFor(t, rel).Update(ctx, rel, metav1.UpdateOptions{FieldManager: "helm"}); err != nil {
		t.Fatalf("kubectl replace --field-manager=helm: %v", err)
	}
	apply(t, ns, "helm", chart, false)
	// Helm conflicts with itself.
	if _, err := tryApply(t, ns, "helm", strings.Replace(chart, `"x":"1"`, `"x":"3"`, 1), false); err == nil || !strings.Contains(err.Error(), `conflict with "helm"`) {
		t.Fatalf("helm's apply of a new value: %v, want a conflict with \"helm\"", err)
	}

	// shared-list-items: a port edited in Argo CD's UI, which sends the
	// whole list.
	svc := apply(t, ns, "argocd-controller", webSvc, true)
	patch(t, svc, "argocd-server", `{"spec":{"ports":[{"name":"http","port":8081,"protocol":"TCP","targetPort":8080}]}}`)
	// Argo CD's sync (forced) can't heal it: its port comes next to the edited one.
	if _, err := tryApply(t, ns, "argocd-controller", webSvc, true); err == nil || !strings.Contains(err.Error(), "Duplicate value") {
		t.Fatalf("argocd-controller's sync after the UI edit: %v, want the duplicate port name refused", err)
	}

	// controller-scope: an image written under kube-controller-manager's name.
	d := apply(t, ns, "argocd-controller", strings.Replace(deployment, "name: web", "name: scoped", 1), true)
	if _, err := resourceFor(t, d).Patch(ctx, "scoped", types.StrategicMergePatchType, []byte(`{"spec":{"template":{"spec":{"containers":[{"name":"nginx","image":"nginx:1.28"}]}}}}`), metav1.PatchOptions{FieldManager: "kube-controller-manager"}); err != nil {
		t.Fatal(err)
	}

	// Optional rules: objects made with kubectl create and autoscale, and
	// a hand edit Argo CD applied since.
	create(t, ns, "kubectl-create", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"made"},"data":{"x":"1"}}`)
	create(t, ns, "kubectl-autoscale", `{"apiVersion":"autoscaling/v2","kind":"HorizontalPodAutoscaler","metadata":{"name":"made"},"spec":{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"absent"},"maxReplicas":3}}`)
	adopted := apply(t, ns, "argocd-controller", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"adopted"},"data":{"x":"1"}}`, true)
	patch(t, adopted, "kubectl-edit", `{"data":{"x":"hand"}}`)
	apply(t, ns, "argocd-controller", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"adopted"},"data":{"x":"hand"}}`, false)

	// The default audit: warnings fail the gate.
	got := signatureAudit(t, 1, "-n", ns)
	want := []string{
		"ConfigMap/release update-and-apply helm (Update) .metadata.annotations.legacy",
		"ConfigMap/wiped managed-fields-wiped ",
		"ConfigMap/wiped-helm managed-fields-wiped ",
		"Deployment/scoped controller-scope kube-controller-manager (Update) .spec.template.spec.containers[name=\"nginx\"].image",
		"Service/web shared-list-items argocd-server (Update) +argocd-controller .spec.ports[port=8081,protocol=\"TCP\"]",
	}
	if diff := cmp.Diff(want, keys(got)); diff != "" {
		t.Fatalf("findings (-want +got):\n%s", diff)
	}
	for _, f := range got {
		if f.Severity != "warning" || f.Fix == "" || f.Evidence == nil || f.Message == "" {
			t.Errorf("%s: severity %s, fix %q, evidence %v", f.short(), f.Severity, f.Fix, f.Evidence)
		}
	}
	// The evidence, as data.
	w := got["ConfigMap/wiped managed-fields-wiped "]
	if w.Evidence.Applier != "argocd-controller" || len(w.Evidence.Bookkeeping) != 1 || w.Evidence.Bookkeeping[0].Key != "argocd.argoproj.io/tracking-id" ||
		w.Reference != "https://github.com/kubernetes/kubernetes/issues/136919" || w.Fix != "kubectl ssa migrate release configmap/wiped -n "+ns+" --from before-first-apply" {
		t.Errorf("wiped: %+v", w)
	}
	if h := got["ConfigMap/wiped-helm managed-fields-wiped "]; h.Evidence.Applier != "helm" || len(h.Evidence.Bookkeeping) != 2 {
		t.Errorf("wiped Helm object: %+v", h.Evidence)
	}
	u := got["ConfigMap/release update-and-apply helm (Update) .metadata.annotations.legacy"]
	if len(u.Evidence.Entries) != 2 || u.Evidence.Entries[0].Operation != "Update" || u.Evidence.Entries[1].Operation != "Apply" ||
		!cmp.Equal(u.Evidence.Shared, []string{".data.x", ".data.y"}) || u.Fix != "kubectl ssa migrate rename configmap/release -n "+ns+" --from helm --field-manager helm" {
		t.Errorf("update-and-apply: %+v %+v", u.Evidence, u.auditFinding)
	}
	l := got[want[4]]
	if l.Evidence.List != ".spec.ports" || len(l.Fixes) != 1 || l.Fixes[0].Mode != "adopt" || !strings.Contains(l.Fix, "--to argocd-controller --mode applier") {
		t.Errorf("shared-list-items: %+v %+v", l.Evidence, l.Fixes)
	}
	if c := got[want[3]]; !strings.Contains(c.Evidence.Rule, ".spec.replicas") || len(c.Fixes) != 2 {
		t.Errorf("controller-scope: %+v", c)
	}

	// The gate: warnings pass --fail-on error; the table names no manager
	// for a wiped object.
	mustSSA(t, 0, "audit", "-n", ns, "--fail-on", "error")
	wantLine(t, mustSSA(t, 1, "audit", "-n", ns, "configmaps/wiped").stdout, `^`+ns+`\s+ConfigMap\s+wiped\s+managed-fields-wiped\s+-\s+-$`)
	// The adopted edit is no finding by default; an info with its rule.
	mustSSA(t, 0, "audit", "-n", ns, "configmaps/adopted", "--expect-manager", "argocd-controller")
	mustSSA(t, 0, "audit", "-n", ns, "configmaps/adopted", "--rules=+adopted-edit")
	mustSSA(t, 1, "audit", "-n", ns, "configmaps/adopted", "--rules=+adopted-edit", "--fail-on", "info")
	// And --rules leaves findings out.
	mustSSA(t, 0, "audit", "-n", ns, "services", "--rules=-shared-list-items")

	optional := signatureAudit(t, 1, "-n", ns, "--rules=+imperative,+adopted-edit", "configmaps/made", "configmaps/adopted", "horizontalpodautoscalers/made")
	var codes []string
	for _, f := range optional {
		codes = append(codes, f.Object.Kind+"/"+f.Object.Name+" "+f.Code+" "+f.Manager)
	}
	sort.Strings(codes)
	if diff := cmp.Diff([]string{"ConfigMap/adopted adopted-edit kubectl-edit", "ConfigMap/made imperative kubectl-create", "HorizontalPodAutoscaler/made imperative kubectl-autoscale"}, codes); diff != "" {
		t.Errorf("optional findings (-want +got):\n%s", diff)
	}

	// The fixes, pasted.
	// managed-fields-wiped: Argo CD syncs once, then before-first-apply lets go.
	apply(t, ns, "argocd-controller", wipedArgo, true)
	runFix(t, w.Fix, "--dry-run=server")
	runFix(t, w.Fix)
	if after := get(t, wiped); len(after.GetManagedFields()) != 1 || after.GetManagedFields()[0].Manager != "argocd-controller" || after.GetLabels()["team"] != "a" {
		t.Errorf("after Argo CD's sync and the fix: managedFields %v, labels %v", after.GetManagedFields(), after.GetLabels())
	}
	// (Helm 4's upgrade does not force: equal values are shared.)
	apply(t, ns, "helm", wipedHelm, false)
	runFix(t, got["ConfigMap/wiped-helm managed-fields-wiped "].Fix)
	// update-and-apply: helm's Update folds into its Apply; Helm's next
	// upgrade changes x and removes the annotation the chart dropped.
	runFix(t, u.Fix, "--dry-run=server")
	runFix(t, u.Fix)
	up, err := tryApply(t, ns, "helm", strings.Replace(chart, `"x":"1"`, `"x":"3"`, 1), false)
	if err != nil {
		t.Fatalf("helm's upgrade after the fix: %v", err)
	}
	if x, _, _ := unstructured.NestedString(up.Object, "data", "x"); x != "3" || up.GetAnnotations()["legacy"] != "" {
		t.Errorf("after helm's upgrade: x %q, annotations %v", x, up.GetAnnotations())
	}
	// shared-list-items: argocd-controller takes the port; its next sync
	// replaces it with the declared one.
	runFix(t, l.Fix, "--dry-run=server")
	runFix(t, l.Fix)
	synced, err := tryApply(t, ns, "argocd-controller", webSvc, true)
	if err != nil {
		t.Fatalf("argocd-controller's sync after the fix: %v", err)
	}
	if p, _, _ := unstructured.NestedSlice(synced.Object, "spec", "ports"); len(p) != 1 || p[0].(map[string]any)["port"] != int64(80) {
		t.Errorf("ports after the sync: %v", p)
	}
	// controller-scope: argocd-controller takes the image; its next sync
	// returns it to the manifest's.
	c := got[want[3]]
	runFix(t, c.Fix, "--dry-run=server")
	runFix(t, c.Fix)
	back := apply(t, ns, "argocd-controller", strings.Replace(deployment, "name: web", "name: scoped", 1), false)
	if c, _, _ := unstructured.NestedSlice(back.Object, "spec", "template", "spec", "containers"); c[0].(map[string]any)["image"] != "nginx:1.27" {
		t.Errorf("image after the sync: %v", c[0])
	}
	// imperative: the fix prints a manifest of what kubectl create set.
	made := optional["ConfigMap/made imperative kubectl-create (Update) .data.x"]
	if out := runFix(t, made.Fix).stdout; !strings.Contains(out, "kind: ConfigMap") || !strings.Contains(out, "x: \"1\"") {
		t.Errorf("extract of the imperative object:\n%s", out)
	}
	// adopted-edit: the edit's entry goes, the value stays.
	a := optional["ConfigMap/adopted adopted-edit kubectl-edit (Update) .data.x"]
	runFix(t, a.Fix)
	if after := get(t, adopted); len(after.GetManagedFields()) != 1 || after.Object["data"].(map[string]any)["x"] != "hand" {
		t.Errorf("after releasing the adopted edit: %v", after.GetManagedFields())
	}

	if after := signatureAudit(t, 0, "-n", ns); len(after) != 0 {
		t.Errorf("findings after the fixes: %v", keys(after))
	}
}
