package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

type auditFinding struct {
	Cluster string `json:"cluster"`
	Object  struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Namespace  string `json:"namespace"`
		Name       string `json:"name"`
	} `json:"object"`
	Code        string   `json:"code"`
	Severity    string   `json:"severity"`
	Manager     string   `json:"manager"`
	Operation   string   `json:"operation"`
	Subresource string   `json:"subresource"`
	SharedWith  []string `json:"sharedWith"`
	Paths       []string `json:"paths"`
	Fix         string   `json:"fix"`
}

type auditReport struct {
	APIVersion string         `json:"apiVersion"`
	Kind       string         `json:"kind"`
	Clusters   []string       `json:"clusters"`
	Scanned    int            `json:"scanned"`
	Findings   []auditFinding `json:"findings"`
}

func auditJSON(t *testing.T, want int, args ...string) auditReport {
	t.Helper()
	r := mustSSA(t, want, append([]string{"audit", "-o", "json"}, args...)...)
	var rep auditReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("decoding the AuditReport: %v\n%s", err, r.stdout)
	}
	if rep.APIVersion != "ssa.kubectl-ssa.io/v1alpha1" || rep.Kind != "AuditReport" {
		t.Errorf("apiVersion %q kind %q", rep.APIVersion, rep.Kind)
	}
	return rep
}

// short is a finding as the tests compare them: name code manager
// (operation /subresource) paths.
func (f auditFinding) short() string {
	s := fmt.Sprintf("%s/%s %s %s", f.Object.Kind, f.Object.Name, f.Code, f.Manager)
	if f.Operation != "" {
		s += " (" + f.Operation
		if f.Subresource != "" {
			s += " /" + f.Subresource
		}
		s += ")"
	}
	if len(f.SharedWith) > 0 {
		s += " +" + strings.Join(f.SharedWith, ",")
	}
	if len(f.Paths) > 0 {
		s += " " + strings.Join(f.Paths, " ")
	}
	return s
}

func shorts(rep auditReport) []string {
	var out []string
	for _, f := range rep.Findings {
		out = append(out, f.short())
	}
	sort.Strings(out)
	return out
}

const auditCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: audgets.example.com}
spec:
  group: example.com
  names: {kind: Audget, plural: audgets, singular: audget}
  scope: Namespaced
  versions:
  - name: v1beta1
    served: SERVED
    storage: true
    schema: &s
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, properties: {size: {type: string}}}
  - name: v1
    served: true
    storage: false
    schema: *s
`

// TestAuditFindings seeds a namespace with one object per finding, each
// made by the writes that make it in real clusters, and audits it.
func TestAuditFindings(t *testing.T) {
	ns := namespace(t)

	// manual-edit: a GitOps object edited by hand.
	manual := apply(t, ns, "gitops", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"manual"},"data":{"x":"1","y":"2"}}`, false)
	patch(t, manual, "kubectl-edit", `{"data":{"x":"hand"}}`)

	// manual-edit through /scale: kubectl scale writes as "kubectl".
	d := apply(t, ns, "gitops", strings.Replace(deployment, "name: web", "name: scaled", 1), false)
	patch(t, d, "kubectl", `{"spec":{"replicas":5}}`, "scale")

	// csa-leftover: client-side kubectl apply.
	csaApply(t, ns, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"csa"},"data":{"x":"1"}}`)

	// ancient-changes: 11 Update managers, one more than the apiserver keeps.
	anc := apply(t, ns, "gitops", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"ancient"},"data":{"base":"1"}}`, false)
	for i := 0; i < 11; i++ {
		patch(t, anc, fmt.Sprintf("writer-%02d", i), fmt.Sprintf(`{"data":{"k%02d":"v"}}`, i))
	}

	// before-first-apply: managedFields reset, then a first apply.
	bfa := apply(t, ns, "creator", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"bfa"},"data":{"x":"1","y":"2"}}`, false)
	patch(t, bfa, "resetter", `{"metadata":{"managedFields":[{}]}}`)
	apply(t, ns, "gitops", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"bfa"},"data":{"x":"1"}}`, false)

	// unserved-apiversion: written at v1beta1, which is then switched off.
	apply(t, "", "test-setup", strings.Replace(auditCRD, "SERVED", "true", 1), true)
	waitEstablished(t, "audgets.example.com")
	apply(t, ns, "gitops", `{"apiVersion":"example.com/v1beta1","kind":"Audget","metadata":{"name":"unserved"},"spec":{"size":"xl"}}`, false)
	apply(t, "", "test-setup", strings.Replace(auditCRD, "SERVED", "false", 1), true)
	t.Cleanup(func() {
		_ = env.dynamic.Resource(crdGVR).Delete(context.Background(), "audgets.example.com", metav1.DeleteOptions{})
	})
	restMapper().Reset()
	time.Sleep(time.Second) // discovery catches up

	// generic-manager: a client that sets no field manager.
	cfg := rest.CopyConfig(env.config)
	cfg.UserAgent = "Go-http-client/1.1"
	generic := parse(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"generic"},"data":{"x":"1"}}`)
	if _, err := dynamic.NewForConfigOrDie(cfg).Resource(cmGVR).Namespace(ns).Create(context.Background(), generic, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// last-applied-size: a 210 kB last-applied annotation.
	big := fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"big"},"data":{"blob":%q}}`, strings.Repeat("x", 210000))
	apply(t, ns, "gitops", fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"big","annotations":{"kubectl.kubernetes.io/last-applied-configuration":%q}},"data":{"blob":"small"}}`, big), false)

	// shared-appliers: two appliers declare the same value.
	apply(t, ns, "gitops", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"shared"},"data":{"x":"1","y":"2"}}`, false)
	apply(t, ns, "helm", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"shared"},"data":{"x":"1"}}`, false)

	rep := auditJSON(t, 1, "-n", ns)
	want := []string{
		"Audget/unserved unserved-apiversion gitops (Apply)",
		"ConfigMap/ancient ancient-changes ancient-changes (Update) .data.k00 .data.k01",
		"ConfigMap/bfa before-first-apply before-first-apply (Update) .data.x .data.y",
		"ConfigMap/big last-applied-size  .metadata.annotations.kubectl.kubernetes.io/last-applied-configuration",
		"ConfigMap/csa csa-leftover kubectl-client-side-apply (Update)",
		"ConfigMap/generic generic-manager Go-http-client (Update)",
		"ConfigMap/manual manual-edit kubectl-edit (Update) .data.x",
		"ConfigMap/shared shared-appliers gitops (Apply) +helm .data.x",
		"Deployment/scaled manual-edit kubectl (Update /scale) .spec.replicas",
	}
	if diff := cmp.Diff(want, shorts(rep)); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
	for _, f := range rep.Findings {
		if f.Object.Namespace != ns || f.Fix == "" || !strings.HasPrefix(f.Fix, "kubectl ssa ") || !strings.Contains(f.Fix, "-n "+ns) {
			t.Errorf("%s: namespace %q, fix %q", f.short(), f.Object.Namespace, f.Fix)
		}
	}

	// Every fix command runs, as a server dry run (generic-manager's
	// needs the name the user chooses).
	for _, f := range rep.Findings {
		fix := strings.ReplaceAll(f.Fix, "NEW-NAME", "my-client")
		fix = strings.ReplaceAll(fix, "'", "") // the quoted paths have no spaces
		args := strings.Fields(fix)[2:]
		if r := ssa(t, append(args, "--dry-run=server")...); r.code != 0 {
			t.Errorf("%s: the fix %q exits %d\n%s%s", f.short(), f.Fix, r.code, r.stdout, r.stderr)
		}
	}

	// The table: one row per finding and the summaries; --fail-on error
	// passes the warnings and fails on the annotation.
	out := mustSSA(t, 1, "audit", "-n", ns, "--fail-on", "error").stdout
	wantLine(t, out, `^NAMESPACE\s+KIND\s+NAME\s+FINDING\s+MANAGER\s+FIELDS$`)
	wantLine(t, out, `^`+ns+`\s+ConfigMap\s+manual\s+manual-edit\s+kubectl-edit \(Update\)\s+\.data\.x$`)
	wantLine(t, out, `^FINDING\s+SEVERITY\s+COUNT\s+OBJECTS$`)
	wantLine(t, out, `^last-applied-size\s+error\s+1\s+1$`)
	wantLine(t, out, `^MANAGER\s+COUNT\s+OBJECTS\s+FINDINGS$`)
	mustSSA(t, 0, "audit", "-n", ns, "configmaps", "--fail-on", "error", "-l", "nothing=here")
	mustSSA(t, 0, "audit", "-n", ns, "--fail-on", "never")

	// The fixes, run for real, leave nothing to find.
	for _, f := range rep.Findings {
		fix := strings.ReplaceAll(strings.ReplaceAll(f.Fix, "NEW-NAME", "my-client"), "'", "")
		if r := ssa(t, strings.Fields(fix)[2:]...); r.code != 0 {
			t.Errorf("%s: the fix %q exits %d\n%s%s", f.short(), f.Fix, r.code, r.stdout, r.stderr)
		}
	}
	if after := auditJSON(t, 0, "-n", ns); len(after.Findings) != 0 {
		t.Errorf("findings after the fixes: %v", shorts(after))
	}
}

// TestAuditExpectManager: the CI gate passes on a GitOps-owned object
// and fails on one edited by hand.
func TestAuditExpectManager(t *testing.T) {
	ns := namespace(t)
	apply(t, ns, "argocd-controller", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"clean","labels":{"app":"clean"}},"data":{"x":"1"}}`, false)
	// A /scale writer is no drift: autoscalers write there by design.
	d := apply(t, ns, "argocd-controller", strings.Replace(deployment, "name: web", "name: scaled", 1), false)
	patch(t, d, "autoscaler", `{"spec":{"replicas":3}}`, "scale")
	edited := apply(t, ns, "argocd-controller", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"edited"},"data":{"x":"1"}}`, false)
	patch(t, edited, "kubectl-edit", `{"data":{"x":"hand"}}`)

	rep := auditJSON(t, 0, "-n", ns, "configmaps/clean", "deployments/scaled", "--expect-manager", "argocd-*", "--fail-on", "error")
	if len(rep.Findings) != 0 || rep.Scanned != 2 {
		t.Errorf("clean objects: scanned %d, findings %v", rep.Scanned, shorts(rep))
	}
	rep = auditJSON(t, 1, "-n", ns, "configmaps", "--expect-manager", "argocd-*", "--fail-on", "error")
	if diff := cmp.Diff([]string{"ConfigMap/edited drift kubectl-edit (Update) .data.x"}, shorts(rep)); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
	if f := rep.Findings[0]; f.Severity != "error" || f.Fix != "kubectl ssa handover release configmap/edited -n "+ns+" --from kubectl-edit --all" {
		t.Errorf("%+v", f)
	}
	// --allow-manager lets a manager's fields be.
	mustSSA(t, 0, "audit", "-n", ns, "configmaps", "--expect-manager", "argocd-*", "--allow-manager", "kubectl-edit", "--fail-on", "error")
}

// TestAuditContexts: two contexts pointing at the test bed give rows for
// both, each naming its cluster.
func TestAuditContexts(t *testing.T) {
	ns := namespace(t)
	cm := apply(t, ns, "gitops", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"hand"},"data":{"x":"1"}}`, false)
	patch(t, cm, "kubectl-patch", `{"data":{"x":"2"}}`)

	cfg, err := clientcmd.LoadFromFile(env.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cur := cfg.Contexts[cfg.CurrentContext]
	cfg.Contexts = map[string]*clientcmdapi.Context{"east": cur.DeepCopy(), "west": cur.DeepCopy()}
	cfg.CurrentContext = "east"
	kc := filepath.Join(t.TempDir(), "two-contexts")
	if err := clientcmd.WriteToFile(*cfg, kc); err != nil {
		t.Fatal(err)
	}
	want := []string{"east ConfigMap/hand manual-edit", "west ConfigMap/hand manual-edit"}
	for _, sel := range [][]string{{"--context", "east,west"}, {"--all-contexts"}} {
		args := append([]string{"--kubeconfig", kc, "-n", ns, "configmaps"}, sel...)
		rep := auditJSON(t, 1, args...)
		var got []string
		for _, f := range rep.Findings {
			got = append(got, f.Cluster+" "+f.Object.Kind+"/"+f.Object.Name+" "+f.Code)
			if !strings.Contains(f.Fix, "--context="+f.Cluster) || !strings.Contains(f.Fix, "--kubeconfig="+kc) {
				t.Errorf("the fix does not name its cluster: %s", f.Fix)
			}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%v (-want +got):\n%s", sel, diff)
		}
		out := mustSSA(t, 1, append([]string{"audit"}, args...)...).stdout
		wantLine(t, out, `^CLUSTER\s+NAMESPACE\s+KIND\s+NAME\s+FINDING\s+MANAGER\s+FIELDS$`)
		wantLine(t, out, `^east\s+`+ns+`\s+ConfigMap\s+hand\s+manual-edit`)
		wantLine(t, out, `^west\s+`+ns+`\s+ConfigMap\s+hand\s+manual-edit`)
	}
	// A cluster that can't be reached: the others are still reported,
	// and the run fails.
	dead := cfg.Clusters[cur.Cluster].DeepCopy()
	dead.Server = "https://127.0.0.1:1"
	cfg.Clusters["dead"] = dead
	cfg.Contexts["dead"] = &clientcmdapi.Context{Cluster: "dead", AuthInfo: cur.AuthInfo}
	if err := clientcmd.WriteToFile(*cfg, kc); err != nil {
		t.Fatal(err)
	}
	r := ssa(t, "audit", "--kubeconfig", kc, "--all-contexts", "-n", ns, "configmaps", "--color", "never")
	if r.code != 2 || !strings.Contains(r.stderr, "error: context dead: ") {
		t.Errorf("a dead cluster: exit %d\n%s", r.code, r.stderr)
	}
	wantLine(t, r.stdout, `^east\s+`+ns+`\s+ConfigMap\s+hand\s+manual-edit`)
	wantLine(t, r.stdout, `^west\s+`+ns+`\s+ConfigMap\s+hand\s+manual-edit`)

	r = ssa(t, "audit", "--kubeconfig", kc, "--context", "east,nowhere", "-n", ns)
	if r.code != 2 || r.stdout != "" || !strings.Contains(r.stderr, `context "nowhere" is not in the kubeconfig`) {
		t.Errorf("an unknown context: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestAuditPartial: kinds the user may not list are named on stderr and in
// the report; the others are audited.
func TestAuditPartial(t *testing.T) {
	ns := namespace(t)
	cm := apply(t, ns, "gitops", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"k":"v"}}`, false)
	patch(t, cm, "kubectl-annotate", `{"metadata":{"annotations":{"by":"hand"}}}`)
	configMapReader(t, ns, "reader")
	// Kinds left out fail the gate unless accepted.
	if r := ssa(t, "audit", "-n", ns, "--as", "reader", "--color", "never"); r.code != 2 || !strings.Contains(r.stderr, "error: the audit is partial") || !strings.Contains(r.stdout, "manual-edit") {
		t.Errorf("a partial audit: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r := mustSSA(t, 1, "audit", "-n", ns, "--as", "reader", "--color", "never", "--allow-partial")
	wantLine(t, r.stdout, `^`+ns+`\s+ConfigMap\s+c\s+manual-edit\s+kubectl-annotate \(Update\)\s+\.metadata\.annotations\.by$`)
	// The first ten are named, the rest counted.
	if !strings.Contains(r.stderr, "warning: not audited: deployments.apps: deployments.apps is forbidden") || !regexp.MustCompile(`warning: not audited: \d+ more kinds \(-o json lists them in unlisted\)`).MatchString(r.stderr) {
		t.Errorf("stderr does not name the kinds left out:\n%s", r.stderr)
	}
	// A user who may list nothing audited nothing: not a pass.
	nobody := ssa(t, "audit", "-n", ns, "--as", "nobody")
	if nobody.code != 2 || !strings.Contains(nobody.stderr, "error: nothing was audited") || nobody.stdout != "" {
		t.Errorf("nothing listable: exit %d\n%s%s", nobody.code, nobody.stdout, nobody.stderr)
	}
	var rep struct {
		Unlisted []string `json:"unlisted"`
	}
	out := mustSSA(t, 1, "audit", "-n", ns, "--as", "reader", "-o", "json", "--allow-partial").stdout
	if err := json.Unmarshal([]byte(out), &rep); err != nil || len(rep.Unlisted) == 0 {
		t.Errorf("unlisted %v (%v)", rep.Unlisted, err)
	}
}

// The story of issue 18: hand edits of GitOps-owned objects, audited with
// --expect-manager. The default fix of each (pasted as a server dry run,
// then for real) lets the applier adopt the fields, so that its next
// apply returns the object to its declared state, instead of releasing
// them (which kept the edits, owned by nobody, and hid them). kubectl
// rollout restart's stamp is its own info finding, which no fix touches:
// the applier's next apply leaves it, and the pods are not rolled again.
func TestAuditDefaultFixRestoresDeclaredState(t *testing.T) {
	ns := namespace(t)
	cmManifest := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"settings"},"data":{"x":"1","y":"2"}}`
	cm := apply(t, ns, "gitops", cmManifest, false)
	patch(t, cm, "kubectl-edit", `{"data":{"x":"hand"}}`)
	patch(t, cm, "kubectl-label", `{"metadata":{"labels":{"hand":"yes"}}}`)
	d := apply(t, ns, "gitops", deployment, false)
	patch(t, d, "kubectl-rollout", `{"spec":{"template":{"metadata":{"annotations":{"kubectl.kubernetes.io/restartedAt":"2026-11-23T10:00:00Z"}}}}}`)

	rep := auditJSON(t, 1, "-n", ns, "configmaps,deployments", "--expect-manager", "gitops")
	want := []string{
		"ConfigMap/settings drift kubectl-edit (Update) .data.x",
		"ConfigMap/settings drift kubectl-label (Update) .metadata.labels.hand",
		`Deployment/web rollout-restart kubectl-rollout (Update) .spec.template.metadata.annotations.kubectl.kubernetes.io/restartedAt`,
	}
	if diff := cmp.Diff(want, shorts(rep)); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
	// --fix forget names the release instead (values stay).
	for _, f := range auditJSON(t, 1, "-n", ns, "configmaps", "--expect-manager", "gitops", "--fix", "forget").Findings {
		if f.Fix != "kubectl ssa handover release configmap/settings -n "+ns+" --from "+f.Manager+" --all" {
			t.Errorf("--fix forget: %s: fix %q", f.short(), f.Fix)
		}
	}
	for _, f := range rep.Findings {
		if f.Code == "rollout-restart" {
			if f.Severity != "info" || f.Fix != "" {
				t.Errorf("%s: severity %s fix %q, want info and none", f.short(), f.Severity, f.Fix)
			}
			continue
		}
		if !strings.Contains(f.Fix, "--field-manager gitops") {
			t.Errorf("%s: the default fix %q does not give the fields to gitops", f.short(), f.Fix)
		}
		args := strings.Fields(strings.ReplaceAll(f.Fix, "'", ""))[2:]
		mustSSA(t, 0, append(args, "--dry-run=server")...)
		mustSSA(t, 0, args...)
	}
	// gitops's next apply: the declared state, and the restart is kept.
	cm = apply(t, ns, "gitops", cmManifest, false)
	if x, _, _ := unstructured.NestedString(cm.Object, "data", "x"); x != "1" || cm.GetLabels()["hand"] != "" {
		t.Errorf("after gitops's apply: data.x %q, labels %v; want the declared 1 and no hand label", x, cm.GetLabels())
	}
	d = apply(t, ns, "gitops", deployment, false)
	if ann, _, _ := unstructured.NestedStringMap(d.Object, "spec", "template", "metadata", "annotations"); ann["kubectl.kubernetes.io/restartedAt"] == "" {
		t.Error("gitops's apply removed the restart stamp: that rolls every pod")
	}
	if after := auditJSON(t, 0, "-n", ns, "configmaps,deployments", "--expect-manager", "gitops"); len(after.Findings) != 1 || after.Findings[0].Code != "rollout-restart" {
		t.Errorf("findings after the fixes: %v", shorts(after))
	}
}
