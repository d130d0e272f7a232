package e2e

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// admissionReport is the admission section of explain-conflict and diff.
type admissionReport struct {
	Admission *struct {
		Exact    bool     `json:"exact"`
		Reasons  []string `json:"reasons"`
		Warnings []string `json:"warnings"`
		Denied   string   `json:"denied"`
		Steps    []struct {
			Kind   string `json:"kind"`
			Name   string `json:"name"`
			Effect string `json:"effect"`
			Ops    []struct {
				Op    string   `json:"op"`
				Path  []string `json:"path"`
				Value any      `json:"value"`
			} `json:"ops"`
		} `json:"steps"`
	} `json:"admission"`
	Verify *struct {
		Status         string   `json:"status"`
		Differences    []string `json:"differences"`
		ServerWarnings []string `json:"serverWarnings"`
	} `json:"verify"`
	Result map[string]any `json:"result"`
}

func admissionOf(t *testing.T, out string) admissionReport {
	t.Helper()
	var r admissionReport
	if err := json.Unmarshal([]byte(out), &r); err != nil || r.Admission == nil {
		t.Fatalf("no admission section (%v):\n%s", err, out)
	}
	return r
}

// steps lists "Kind Name effect" of a report.
func (r admissionReport) steps() string {
	var s []string
	for _, st := range r.Admission.Steps {
		s = append(s, st.Kind+" "+st.Name+" "+st.Effect)
	}
	return strings.Join(s, "; ")
}

// clusterObject creates a cluster-scoped object for the test and deletes
// it at the end.
func clusterObject(t *testing.T, manifest string) {
	t.Helper()
	if err := applyTry("", "e2e", manifest); err != nil {
		t.Fatalf("creating %s: %v", manifest, err)
	}
	u := parse(t, manifest)
	t.Cleanup(func() { deleteObject(u) })
}

// configMapWebhook is a MutatingWebhookConfiguration whose webhook is
// called for the ConfigMaps labelled webhook=on in namespace ns.
func configMapWebhook(name, webhook, ns, failurePolicy, clientConfig string) string {
	return `apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata: {name: ` + name + `}
webhooks:
- name: ` + webhook + `
  admissionReviewVersions: [v1]
  sideEffects: None
  failurePolicy: ` + failurePolicy + `
  timeoutSeconds: 2
  clientConfig: {` + clientConfig + `}
  namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: ` + ns + `}}
  objectSelector: {matchLabels: {webhook: "on"}}
  rules:
  - {apiGroups: [""], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [configmaps]}
`
}

// waitForServer polls the server's dry run of manifest until ok says the
// server's admission acts on it (a policy takes effect when the
// apiserver's informers have it, not when it is created).
func waitForServer(t *testing.T, ns, manifest string, ok func(obj *unstructured.Unstructured, err error) bool) {
	t.Helper()
	u := parse(t, manifest)
	u.SetNamespace(ns)
	deadline := time.Now().Add(60 * time.Second)
	for {
		out, err := resourceFor(t, u).Apply(context.Background(), u.GetName(), u, metav1.ApplyOptions{FieldManager: "probe", DryRun: []string{metav1.DryRunAll}})
		if ok(out, err) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server's admission did not act on %s within 60s (last: %v)", u.GetName(), err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// Built-in admission plugins: a PVC gets the default StorageClass and its
// protection finalizer, an Ingress the default IngressClass, and the
// prediction (explain-conflict --verify, diff's result) is the server's.
func TestAdmissionBuiltinPlugins(t *testing.T) {
	ns := namespace(t)
	sc, ic := "e2e-default-"+rand.String(5), "e2e-default-"+rand.String(5)
	clusterObject(t, "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata:\n  name: "+sc+"\n  annotations: {storageclass.kubernetes.io/is-default-class: \"true\"}\nprovisioner: example.com/none\n")
	clusterObject(t, "apiVersion: networking.k8s.io/v1\nkind: IngressClass\nmetadata:\n  name: "+ic+"\n  annotations: {ingressclass.kubernetes.io/is-default-class: \"true\"}\nspec: {controller: example.com/ingress}\n")
	pvc := "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data}\nspec:\n  accessModes: [ReadWriteOnce]\n  resources: {requests: {storage: 1Gi}}\n"
	noClass := strings.Replace(pvc, "spec:\n", "spec:\n  storageClassName: \"\"\n", 1)
	ingress := "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: web}\nspec:\n  defaultBackend: {service: {name: web, port: {number: 80}}}\n"
	// The server picks a new default class once its informer has it.
	waitForServer(t, ns, pvc, func(o *unstructured.Unstructured, err error) bool {
		got, _, _ := unstructured.NestedString(o.Object, "spec", "storageClassName")
		return err == nil && got == sc
	})
	waitForServer(t, ns, ingress, func(o *unstructured.Unstructured, err error) bool {
		got, _, _ := unstructured.NestedString(o.Object, "spec", "ingressClassName")
		return err == nil && got == ic
	})
	dir := t.TempDir()
	for _, c := range []struct {
		name, manifest, steps string
		path                  []string
		value                 string
	}{
		{"pvc", pvc, "BuiltinPlugin DefaultStorageClass mutates; BuiltinPlugin StorageObjectInUseProtection mutates", []string{"spec", "storageClassName"}, sc},
		{"pvc-no-class", noClass, "BuiltinPlugin StorageObjectInUseProtection mutates", []string{"spec", "storageClassName"}, ""},
		{"ingress", ingress, "BuiltinPlugin DefaultIngressClass mutates", []string{"spec", "ingressClassName"}, ic},
	} {
		t.Run(c.name, func(t *testing.T) {
			file := filepath.Join(dir, c.name+".yaml")
			writeFile(t, file, c.manifest)
			r := admissionOf(t, mustSSA(t, 0, "explain-conflict", "-n", ns, "-f", file, "--verify", "-o", "json").stdout)
			if !r.Admission.Exact || r.steps() != c.steps {
				t.Errorf("admission: exact %v, steps %q, want %q", r.Admission.Exact, r.steps(), c.steps)
			}
			if r.Verify == nil || r.Verify.Status != "agrees" {
				t.Errorf("--verify: %+v", r.Verify)
			}
			d := admissionOf(t, mustSSA(t, 1, "diff", "-n", ns, "-f", file, "-o", "json").stdout)
			if got, _, _ := unstructured.NestedString(d.Result, c.path...); got != c.value {
				t.Errorf("diff's result: %v = %q, want %q", c.path, got, c.value)
			}
			text := mustSSA(t, 0, "explain-conflict", "-n", ns, "-f", file).stdout
			if !strings.Contains(text, "admission: plugin ") {
				t.Errorf("the text view does not name the plugin:\n%s", text)
			}
		})
	}
}

// Admission policies and webhooks are matched as the apiserver matches
// them: what matches is named, and the prediction is not exact (exit 4)
// unless --verify has the server check it; a denial the server makes is
// a disagreement (exit 3). What does not match leaves the answer exact.
func TestAdmissionPoliciesAndWebhooks(t *testing.T) {
	ns, other := namespace(t), namespace(t)
	id := rand.String(5)
	vap, hook, mapName := "e2e-max-replicas-"+id, "e2e-hook-"+id, "e2e-team-"+id
	clusterObject(t, `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: `+vap+`}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - {apiGroups: [apps], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [deployments]}
  validations:
  - {expression: "object.spec.replicas <= 5", message: "at most 5 replicas"}
`)
	clusterObject(t, `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: `+vap+`}
spec:
  policyName: `+vap+`
  validationActions: [Deny]
  matchResources:
    namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: `+ns+`}}
`)
	clusterObject(t, configMapWebhook(hook, "hook.example.com", ns, "Ignore", `url: "https://127.0.0.1:1/mutate"`))
	clusterObject(t, `apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicy
metadata: {name: `+mapName+`}
spec:
  failurePolicy: Fail
  reinvocationPolicy: Never
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [secrets]}
    namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: `+ns+`}}
  mutations:
  - patchType: ApplyConfiguration
    applyConfiguration:
      expression: 'Object{metadata: Object.metadata{labels: {"team": "platform"}}}'
`)
	clusterObject(t, `apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicyBinding
metadata: {name: `+mapName+`}
spec: {policyName: `+mapName+`}
`)
	deploy := func(replicas string) string {
		return "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: big}\nspec:\n  replicas: " + replicas + "\n  selector: {matchLabels: {app: big}}\n  template:\n    metadata: {labels: {app: big}}\n    spec:\n      containers: [{name: c, image: nginx}]\n"
	}
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\n  labels: {webhook: \"on\"}\ndata: {a: b}\n"
	plainCM := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: plain}\ndata: {a: b}\n"
	secret := "apiVersion: v1\nkind: Secret\nmetadata: {name: token}\nstringData: {token: S3CR3T-admission}\n"
	waitForServer(t, ns, deploy("8"), func(_ *unstructured.Unstructured, err error) bool {
		return err != nil && strings.Contains(err.Error(), "denied request")
	})
	waitForServer(t, ns, secret, func(o *unstructured.Unstructured, err error) bool {
		return err == nil && o.GetLabels()["team"] == "platform"
	})
	dir := t.TempDir()
	file := func(name, text string) string {
		f := filepath.Join(dir, name)
		writeFile(t, f, text)
		return f
	}
	big, small := file("big.yaml", deploy("8")), file("small.yaml", deploy("2"))
	hooked, plain, sec := file("cm.yaml", cm), file("plain.yaml", plainCM), file("secret.yaml", secret)

	// The policy matches in ns and is evaluated: the server's denial,
	// word for word, exact, exit 1 (the apply would fail).
	denial := `deployments.apps "big" is forbidden: ValidatingAdmissionPolicy '` + vap + `' with binding '` + vap + `' denied request: at most 5 replicas`
	r := ssa(t, "explain-conflict", "-n", ns, "-f", big, "-o", "json")
	a := admissionOf(t, r.stdout)
	if r.code != 1 || !a.Admission.Exact || a.Admission.Denied != denial || a.steps() != "ValidatingAdmissionPolicy "+vap+" (binding "+vap+") denies" {
		t.Errorf("a denying policy: exit %d, exact %v, denied %q, steps %q\n%s", r.code, a.Admission.Exact, a.Admission.Denied, a.steps(), r.stderr)
	}
	text := ssa(t, "explain-conflict", "-n", ns, "-f", big)
	if text.code != 1 || !strings.Contains(text.stdout, "DENIED") || !strings.Contains(text.stdout, "ValidatingAdmissionPolicy "+vap+" (binding "+vap+") denies the apply") {
		t.Errorf("the text view: exit %d\n%s", text.code, text.stdout)
	}
	// --verify: the server denies it as predicted.
	r = ssa(t, "explain-conflict", "-n", ns, "-f", big, "--verify", "-o", "json")
	a = admissionOf(t, r.stdout)
	if r.code != 1 || a.Verify == nil || a.Verify.Status != "agrees" {
		t.Errorf("--verify of a denied apply: exit %d, %+v\n%s", r.code, a.Verify, r.stderr)
	}
	// The small one is admitted: exact without --verify, and the server agrees.
	a = admissionOf(t, mustSSA(t, 0, "explain-conflict", "-n", ns, "-f", small, "-o", "json").stdout)
	if !a.Admission.Exact || a.steps() != "ValidatingAdmissionPolicy "+vap+" (binding "+vap+") admits" {
		t.Errorf("an admitted apply: %+v", *a.Admission)
	}
	mustSSA(t, 0, "explain-conflict", "-n", ns, "-f", small, "--verify")
	// diff: the denial first, the policy named.
	if d := ssa(t, "diff", "-n", ns, "-f", big); d.code != 1 || !strings.Contains(d.stdout, "admission refuses it: "+denial) {
		t.Errorf("diff: exit %d\n%s", d.code, d.stdout)
	}
	// An apply that conflicts fails before admission; what the forced
	// apply then meets is said with the way out that forces.
	if err := applyTry(ns, "platform", deploy("2")); err != nil {
		t.Fatal(err)
	}
	c := ssa(t, "explain-conflict", "-n", ns, "-f", big, "--field-manager", "ci")
	if c.code != 1 || !strings.Contains(c.stdout, "at most 5 replicas") {
		t.Errorf("a conflicting apply: exit %d\n%s", c.code, c.stdout)
	}
	// In the other namespace nothing matches: exact, exit 0.
	a = admissionOf(t, mustSSA(t, 0, "explain-conflict", "-n", other, "-f", big, "-o", "json").stdout)
	if !a.Admission.Exact || len(a.Admission.Steps) != 0 {
		t.Errorf("other namespace: %+v", *a.Admission)
	}

	// The webhook matches the labelled ConfigMap only.
	r = ssa(t, "explain-conflict", "-n", ns, "-f", hooked, "-o", "json")
	if a = admissionOf(t, r.stdout); r.code != 4 || a.steps() != "MutatingWebhook "+hook+"/hook.example.com may-mutate" {
		t.Errorf("a matching webhook: exit %d, steps %q", r.code, a.steps())
	}
	mustSSA(t, 0, "explain-conflict", "-n", ns, "-f", plain)
	// Its failurePolicy is Ignore and it can't be reached: the server's
	// dry run agrees, and --verify says so.
	mustSSA(t, 0, "explain-conflict", "-n", ns, "-f", hooked, "--verify")
	// Once applied, a diff of the same manifest changes nothing, but the
	// webhook may: exit 4.
	mustSSA(t, 0, "explain-conflict", "-n", other, "-f", hooked)
	if err := applyTry(ns, "kubectl", cm); err != nil {
		t.Fatal(err)
	}
	if d := ssa(t, "diff", "-n", ns, "-f", hooked); d.code != 4 || !strings.Contains(d.stderr, "may change or refuse") {
		t.Errorf("diff with no change and a matching webhook: exit %d\n%s\n%s", d.code, d.stdout, d.stderr)
	}

	// The mutating policy sets a label on Secrets: in the prediction,
	// the server agrees, and no Secret value is printed.
	r = ssa(t, "explain-conflict", "-n", ns, "-f", sec, "--verify")
	if r.code != 0 || !strings.Contains(r.stdout, `MutatingAdmissionPolicy `+mapName+` (binding `+mapName+`) sets .metadata.labels.team to "platform"`) {
		t.Errorf("a mutating policy: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if strings.Contains(r.stdout+r.stderr, "S3CR3T") {
		t.Errorf("a Secret value is printed:\n%s\n%s", r.stdout, r.stderr)
	}
}

// warningsCollector keeps the warnings a server returns.
type warningsCollector struct{ got []string }

func (w *warningsCollector) HandleWarningHeader(_ int, _ string, text string) {
	w.got = append(w.got, text)
}

// PodSecurity is evaluated with its own library against the namespace's
// labels: a workload's template gets the server's warning word for word,
// a Pod that breaks the enforced level is denied as the server denies it
// (exit 1, and --verify agrees), a compliant one gets its warning, and
// the rest of its admission is modelled: --verify agrees.
func TestAdmissionPodSecurity(t *testing.T) {
	ns := namespace(t)
	nsObj, err := env.client.CoreV1().Namespaces().Get(context.Background(), ns, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	nsObj.Labels["pod-security.kubernetes.io/enforce"] = "baseline"
	nsObj.Labels["pod-security.kubernetes.io/warn"] = "restricted"
	if _, err := env.client.CoreV1().Namespaces().Update(context.Background(), nsObj, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	deploy := "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      containers: [{name: c, image: nginx}]\n"
	hostPod := "apiVersion: v1\nkind: Pod\nmetadata: {name: host}\nspec:\n  hostNetwork: true\n  containers: [{name: c, image: nginx}]\n"
	plainPod := "apiVersion: v1\nkind: Pod\nmetadata: {name: plain}\nspec:\n  containers: [{name: c, image: nginx}]\n"
	// What the server says of each, from its dry run.
	server := func(manifest string) (warnings []string, err error) {
		w := &warningsCollector{}
		cfg := rest.CopyConfig(env.config)
		cfg.WarningHandler = w
		dyn := dynamic.NewForConfigOrDie(cfg)
		u := parse(t, manifest)
		gvk := u.GroupVersionKind()
		m, merr := restMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
		if merr != nil {
			t.Fatal(merr)
		}
		_, err = dyn.Resource(m.Resource).Namespace(ns).Apply(context.Background(), u.GetName(), u, metav1.ApplyOptions{FieldManager: "kubectl", DryRun: []string{metav1.DryRunAll}})
		return w.got, err
	}
	dir := t.TempDir()
	type report struct {
		admissionReport
		Message string `json:"message"`
	}
	run := func(manifest string, code int, extra ...string) (report, result) {
		t.Helper()
		f := filepath.Join(dir, "m.yaml")
		writeFile(t, f, manifest)
		r := mustSSA(t, code, append([]string{"explain-conflict", "-n", ns, "-f", f, "-o", "json"}, extra...)...)
		var rep report
		if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || rep.Admission == nil {
			t.Fatalf("%v\n%s", err, r.stdout)
		}
		return rep, r
	}

	// PodSecurity reads the namespace's labels from the apiserver's
	// informer: wait until it has the new ones.
	var warnings []string
	deadline := time.Now().Add(60 * time.Second)
	for {
		warnings, err = server(deploy)
		if err != nil || len(warnings) > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if err != nil || len(warnings) != 1 || !strings.Contains(warnings[0], `would violate PodSecurity "restricted:latest"`) {
		t.Fatalf("the server's dry run of the Deployment: %v, warnings %q", err, warnings)
	}
	rep, _ := run(deploy, 0, "--verify")
	if rep.Verify == nil || rep.Verify.Status != "agrees" || len(rep.Verify.ServerWarnings) != 1 || rep.Verify.ServerWarnings[0] != warnings[0] {
		t.Errorf("--verify of the Deployment: %+v", rep.Verify)
	}
	got := rep.Admission.Warnings
	if len(got) != 1 || got[0] != warnings[0] || !rep.Admission.Exact {
		t.Errorf("the Deployment's warnings:\n got %q\nwant %q", got, warnings)
	}

	_, err = server(hostPod)
	if err == nil || !strings.Contains(err.Error(), "violates PodSecurity") {
		t.Fatalf("the server's dry run of the host-network Pod: %v", err)
	}
	_, r := run(hostPod, 1, "--verify")
	if !strings.Contains(r.stdout, `"status": "agrees"`) && !strings.Contains(r.stdout, `"status":"agrees"`) {
		t.Errorf("--verify of a predicted denial:\n%s", r.stdout)
	}
	text := mustSSA(t, 1, "explain-conflict", "-n", ns, "-f", filepath.Join(dir, "m.yaml"))
	if !strings.Contains(text.stdout, "DENIED: admission refuses the apply as \"kubectl\": "+err.Error()) || strings.Contains(text.stdout, "Ways to resolve it") {
		t.Errorf("the denial is not the server's:\n%s\nserver: %v", text.stdout, err)
	}

	warnings, err = server(plainPod)
	if err != nil || len(warnings) != 1 {
		t.Fatalf("the server's dry run of the plain Pod: %v %q", err, warnings)
	}
	// The rest of a Pod's create (its service account, token volume,
	// priority, tolerations) is modelled: exact, and --verify agrees.
	rep, _ = run(plainPod, 0, "--verify")
	got = rep.Admission.Warnings
	if len(got) != 1 || got[0] != warnings[0] || !rep.Admission.Exact || rep.Verify == nil || rep.Verify.Status != "agrees" {
		t.Errorf("the plain Pod: warnings %q, want %q; exact %v; verify %+v", got, warnings, rep.Admission.Exact, rep.Verify)
	}
}

// A file that relabels an existing Namespace and then applies objects in
// it: they are judged by the file's labels, as kubectl apply applies the
// Namespace first, and --verify says it can't check them (the server's
// dry run, sent now, would see the old labels). A Namespace's own
// PodSecurity labels are checked as the server checks them.
func TestAdmissionNamespaceRelabelledInTheInput(t *testing.T) {
	ns := namespace(t)
	dir := t.TempDir()
	nsDoc := "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: " + ns + "\n  labels: {pod-security.kubernetes.io/enforce: baseline}\n"
	pod := "apiVersion: v1\nkind: Pod\nmetadata: {name: host, namespace: " + ns + "}\nspec:\n  hostNetwork: true\n  containers: [{name: c, image: nginx}]\n"
	file := filepath.Join(dir, "relabel.yaml")
	writeFile(t, file, nsDoc+"---\n"+pod)
	r := mustSSA(t, 1, "explain-conflict", "-f", file)
	if !strings.Contains(r.stdout, `DENIED: admission refuses the apply as "kubectl": pods "host" is forbidden: violates PodSecurity "baseline:latest"`) {
		t.Errorf("the Pod is not judged by the file's labels:\n%s", r.stdout)
	}
	r = ssa(t, "explain-conflict", "-f", file, "--verify", "-o", "json")
	if r.code != 4 || !strings.Contains(r.stdout, "the input changes namespace") || !strings.Contains(r.stdout, `"status": "not-run"`) {
		t.Errorf("--verify: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}

	// An invalid level: refused as the server refuses it.
	bad := filepath.Join(dir, "bad.yaml")
	badDoc := strings.Replace(nsDoc, "enforce: baseline", "enforce: bogus", 1)
	writeFile(t, bad, badDoc)
	_, err := resourceFor(t, parse(t, badDoc)).Apply(context.Background(), ns, parse(t, badDoc), metav1.ApplyOptions{FieldManager: "kubectl", DryRun: []string{metav1.DryRunAll}})
	if err == nil {
		t.Fatal("the server accepts an invalid PodSecurity level")
	}
	r = mustSSA(t, 1, "explain-conflict", "-f", bad, "--verify")
	if !strings.Contains(r.stdout, "DENIED: admission refuses the apply as \"kubectl\": "+err.Error()) || !strings.Contains(r.stdout, "agrees") {
		t.Errorf("an invalid PodSecurity label:\n%s\nserver: %v", r.stdout, err)
	}
}

// A mutating webhook served by the test over TLS on loopback: the
// prediction names it and is not exact (exit 4) without calling it;
// --verify has the server call it (a dry run) and lists what it changed
// (exit 3).
func TestAdmissionWebhookServedByTheTest(t *testing.T) {
	ns := namespace(t)
	var mu sync.Mutex
	calls := 0
	srv, ca := webhookServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var review map[string]any
		if err := json.NewDecoder(r.Body).Decode(&review); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		mu.Lock()
		calls++
		mu.Unlock()
		req, _ := review["request"].(map[string]any)
		patch := base64.StdEncoding.EncodeToString([]byte(`[{"op":"add","path":"/metadata/labels/injected","value":"true"}]`))
		review["response"] = map[string]any{"uid": req["uid"], "allowed": true, "patchType": "JSONPatch", "patch": patch}
		delete(review, "request")
		_ = json.NewEncoder(w).Encode(review)
	}))
	hook := "e2e-inject-" + rand.String(5)
	clusterObject(t, configMapWebhook(hook, "inject.example.com", ns, "Fail", `url: "`+srv.URL+`/mutate", caBundle: "`+ca+`"`))
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\n  labels: {webhook: \"on\"}\ndata: {a: b}\n"
	waitForServer(t, ns, cm, func(o *unstructured.Unstructured, err error) bool {
		return err == nil && o.GetLabels()["injected"] == "true"
	})
	file := filepath.Join(t.TempDir(), "cm.yaml")
	writeFile(t, file, cm)
	mu.Lock()
	before := calls
	mu.Unlock()
	r := ssa(t, "explain-conflict", "-n", ns, "-f", file, "-o", "json")
	a := admissionOf(t, r.stdout)
	mu.Lock()
	after := calls
	mu.Unlock()
	if r.code != 4 || a.steps() != "MutatingWebhook "+hook+"/inject.example.com may-mutate" || after != before {
		t.Errorf("without --verify: exit %d, steps %q, webhook called %d times", r.code, a.steps(), after-before)
	}
	// --verify: the server's dry run answers for the webhook (resolved):
	// what it set is listed, and the apply succeeds (exit 0).
	r = ssa(t, "explain-conflict", "-n", ns, "-f", file, "--verify", "-o", "json")
	if a := admissionOf(t, r.stdout); r.code != 0 || a.Verify == nil || a.Verify.Status != "resolved" || !strings.Contains(strings.Join(a.Verify.Differences, "\n"), `.metadata.labels.injected: set by the server, not predicted (server "true")`) {
		t.Errorf("--verify -o json: exit %d, %+v\n%s", r.code, a.Verify, r.stderr)
	}
	r = ssa(t, "explain-conflict", "-n", ns, "-f", file, "--verify")
	if r.code != 0 || !strings.Contains(r.stdout, "answers for what is not evaluated here") || !strings.Contains(r.stdout, `.metadata.labels.injected: set by the server, not predicted (server "true")`) {
		t.Errorf("--verify: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	mu.Lock()
	if calls == after {
		t.Errorf("--verify did not have the server call the webhook")
	}
	mu.Unlock()
}

// The built-in admission of a Pod's create, modelled from the apiserver's
// code: LimitRanger's defaults and annotation, the ServiceAccount's token
// volume (its generated name listed as unknown, never invented), the
// global default PriorityClass, DefaultTolerationSeconds' tolerations, a
// RuntimeClass's overhead and scheduling. explain-conflict --verify
// agrees with the server's dry run (exit 0); a Pod over the LimitRange's
// max, or naming a PriorityClass that does not exist, is DENIED in the
// server's own words; automount off adds no volume.
func TestAdmissionPodCreate(t *testing.T) {
	ns := namespace(t)
	id := rand.String(5)
	pc, rc := "e2e-default-"+id, "e2e-sandbox-"+id
	probe := "apiVersion: v1\nkind: Pod\nmetadata: {name: probe}\nspec: {containers: [{name: c, image: nginx}]}\n"
	t.Cleanup(func() {
		// A global default PriorityClass gives every Pod its priority:
		// once deleted, wait until the server forgets it, so that the
		// tests after this one don't see it.
		u := parse(t, probe)
		u.SetNamespace(ns)
		for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
			o, err := resourceFor(t, u).Apply(context.Background(), u.GetName(), u, metav1.ApplyOptions{FieldManager: "probe", DryRun: []string{metav1.DryRunAll}})
			if got, _, _ := unstructured.NestedString(o.Object, "spec", "priorityClassName"); err == nil && got == "" {
				return
			}
		}
		t.Logf("the server still gives Pods PriorityClass %s", pc)
	})
	clusterObject(t, "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: "+pc+"}\nvalue: 1000\nglobalDefault: true\npreemptionPolicy: Never\n")
	clusterObject(t, "apiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata: {name: "+rc+"}\nhandler: runsc\noverhead: {podFixed: {cpu: 250m, memory: 120Mi}}\nscheduling:\n  nodeSelector: {sandbox: \"true\"}\n  tolerations: [{key: sandbox, operator: Exists, effect: NoSchedule}]\n")
	if err := applyTry(ns, "e2e", "apiVersion: v1\nkind: LimitRange\nmetadata: {name: limits}\nspec:\n  limits:\n  - type: Container\n    default: {cpu: 500m, memory: 256Mi}\n    defaultRequest: {cpu: 100m}\n    max: {cpu: \"1\"}\n"); err != nil {
		t.Fatal(err)
	}
	waitForServer(t, ns, probe, func(o *unstructured.Unstructured, err error) bool {
		got, _, _ := unstructured.NestedString(o.Object, "spec", "priorityClassName")
		return err == nil && got == pc && o.GetAnnotations()["kubernetes.io/limit-ranger"] != ""
	})
	dir := t.TempDir()
	file := func(name, spec string) string {
		f := filepath.Join(dir, name+".yaml")
		writeFile(t, f, "apiVersion: v1\nkind: Pod\nmetadata: {name: "+name+"}\nspec:\n"+spec)
		return f
	}
	type report struct {
		admissionReport
		Message string   `json:"message"`
		Unknown []string `json:"unknown"`
	}
	run := func(code int, args ...string) report {
		t.Helper()
		r := mustSSA(t, code, append(args, "-n", ns, "-o", "json")...)
		var rep report
		if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || rep.Admission == nil {
			t.Fatalf("%v\n%s", err, r.stdout)
		}
		return rep
	}
	// What the server says of a manifest.
	server := func(f string) (*unstructured.Unstructured, error) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		u := parse(t, string(b))
		u.SetNamespace(ns)
		return resourceFor(t, u).Apply(context.Background(), u.GetName(), u, metav1.ApplyOptions{FieldManager: "kubectl", DryRun: []string{metav1.DryRunAll}})
	}

	full := file("full", "  runtimeClassName: "+rc+"\n  initContainers: [{name: init, image: busybox, resources: {limits: {memory: 64Mi}}}]\n  containers:\n  - {name: c, image: nginx}\n  - {name: d, image: nginx, resources: {requests: {cpu: 200m}}}\n")
	rep := run(0, "explain-conflict", "-f", full, "--verify")
	want := "BuiltinPlugin LimitRanger mutates; BuiltinPlugin ServiceAccount mutates; BuiltinPlugin Priority mutates; BuiltinPlugin DefaultTolerationSeconds mutates; BuiltinPlugin RuntimeClass mutates"
	if !rep.Admission.Exact || rep.steps() != want || rep.Verify == nil || rep.Verify.Status != "agrees" {
		t.Errorf("the full Pod: exact %v, steps %q, verify %+v", rep.Admission.Exact, rep.steps(), rep.Verify)
	}
	// diff: the result has the volume under its name's prefix, and says
	// its name and the mounts' are not known.
	d := run(1, "diff", "-f", full)
	vols, _, _ := unstructured.NestedSlice(d.Result, "spec", "volumes")
	if len(vols) != 1 || vols[0].(map[string]any)["name"] != "kube-api-access-" {
		t.Errorf("diff's result volumes: %v", vols)
	}
	unknown := strings.Join(d.Unknown, "\n")
	for _, p := range []string{`.spec.volumes[name="kube-api-access-"].name`, `.spec.initContainers[name="init"].volumeMounts[mountPath="/var/run/secrets/kubernetes.io/serviceaccount"].name`, `.spec.containers[name="d"].volumeMounts[mountPath="/var/run/secrets/kubernetes.io/serviceaccount"].name`} {
		if !strings.Contains(unknown, p) {
			t.Errorf("diff's unknown lacks %s:\n%s", p, unknown)
		}
	}
	srv, err := server(full)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range [][]string{{"metadata", "annotations", "kubernetes.io/limit-ranger"}, {"spec", "priorityClassName"}, {"spec", "nodeSelector", "sandbox"}, {"spec", "overhead", "memory"}, {"status", "qosClass"}} {
		got, _, _ := unstructured.NestedFieldNoCopy(d.Result, p...)
		want, _, _ := unstructured.NestedFieldNoCopy(srv.Object, p...)
		if got != want || got == nil {
			t.Errorf("diff's result %v = %v, the server's %v", p, got, want)
		}
	}

	// Denials, in the server's words.
	for _, c := range []struct{ name, spec, plugin string }{
		{"big", "  containers: [{name: c, image: nginx, resources: {limits: {cpu: \"2\"}}}]\n", "LimitRanger"},
		{"nopc", "  priorityClassName: e2e-nosuch\n  containers: [{name: c, image: nginx}]\n", "Priority"},
	} {
		f := file(c.name, c.spec)
		_, err := server(f)
		if err == nil {
			t.Fatalf("%s: the server admits it", c.name)
		}
		rep := run(1, "explain-conflict", "-f", f, "--verify")
		if rep.Admission.Denied != err.Error() || !strings.HasSuffix(rep.steps(), "BuiltinPlugin "+c.plugin+" denies") || rep.Verify == nil || rep.Verify.Status != "agrees" {
			t.Errorf("%s: denied %q\nserver %q\nsteps %q, verify %+v", c.name, rep.Admission.Denied, err.Error(), rep.steps(), rep.Verify)
		}
		text := mustSSA(t, 1, "explain-conflict", "-n", ns, "-f", f)
		if !strings.Contains(text.stdout, "DENIED: admission refuses the apply as \"kubectl\": "+err.Error()) {
			t.Errorf("%s: the text view:\n%s", c.name, text.stdout)
		}
	}

	// A Pod in a namespace the input creates first: the service account
	// controller gives the namespace its default account, which the
	// plugin waits for; no denial.
	fresh := "e2e-fresh-" + id
	both := filepath.Join(dir, "both.yaml")
	writeFile(t, both, "apiVersion: v1\nkind: Namespace\nmetadata: {name: "+fresh+"}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: "+fresh+"}\nspec: {containers: [{name: c, image: nginx}]}\n")
	if r := mustSSA(t, 0, "explain-conflict", "-f", both); strings.Contains(r.stdout, "DENIED") || !strings.Contains(r.stdout, "plugin ServiceAccount") {
		t.Errorf("a Pod in a namespace of the input:\n%s", r.stdout)
	}

	// No token without automount.
	noauto := file("noauto", "  automountServiceAccountToken: false\n  containers: [{name: c, image: nginx}]\n")
	rep = run(0, "explain-conflict", "-f", noauto, "--verify")
	d = run(1, "diff", "-f", noauto)
	if _, has, _ := unstructured.NestedFieldNoCopy(d.Result, "spec", "volumes"); has || strings.Contains(strings.Join(d.Unknown, " "), "kube-api-access") || rep.Verify == nil || rep.Verify.Status != "agrees" {
		t.Errorf("automount off: volumes in the result %v, unknown %q, verify %+v", has, d.Unknown, rep.Verify)
	}
}
