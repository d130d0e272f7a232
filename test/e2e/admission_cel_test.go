package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// mustApply applies manifest in ns as the test's own manager.
func mustApply(t *testing.T, ns, manifest string) {
	t.Helper()
	if err := applyTry(ns, "e2e", manifest); err != nil {
		t.Fatalf("applying %s: %v", manifest, err)
	}
}

// serverDryRun is the server's answer to an apply of manifest in ns by
// kubectl: the object, its warnings, its error.
func serverDryRun(t *testing.T, ns, manifest string) (*unstructured.Unstructured, []string, error) {
	t.Helper()
	w := &warningsCollector{}
	cfg := rest.CopyConfig(env.config)
	cfg.WarningHandler = w
	u := parse(t, manifest)
	u.SetNamespace(ns)
	m, err := restMapper().RESTMapping(u.GroupVersionKind().GroupKind(), u.GroupVersionKind().Version)
	if err != nil {
		t.Fatal(err)
	}
	out, err := dynamic.NewForConfigOrDie(cfg).Resource(m.Resource).Namespace(ns).Apply(context.Background(), u.GetName(), u, metav1.ApplyOptions{FieldManager: "kubectl", DryRun: []string{metav1.DryRunAll}})
	return out, w.got, err
}

// Validating and mutating admission policies are evaluated locally, with
// the apiserver's own code (ssa-admission-eval): params by name and by
// selector, parameterNotFoundAction, match conditions on the user, object
// selectors, Deny/Warn/Audit, messageExpression; mutating policies of both
// patch types, reinvoked as the server reinvokes them. Each prediction is
// compared with the server's dry run: the denial word for word, the
// warnings, the object (--verify).
func TestAdmissionPoliciesEvaluated(t *testing.T) {
	ns := namespace(t)
	id := rand.String(5)
	scope := "    namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: " + ns + "}}\n"
	limits, flags := "e2e-limits-"+id, "e2e-flags-"+id
	// Params: one by name, two by selector.
	mustApply(t, ns, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: limits}\ndata: {max: '4'}\n")
	mustApply(t, ns, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: flag-a, labels: {flags: 'on'}}\ndata: {forbidden: 'debug'}\n")
	mustApply(t, ns, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: flag-b, labels: {flags: 'on'}}\ndata: {forbidden: 'trace'}\n")
	clusterObject(t, `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: `+limits+`}
spec:
  failurePolicy: Fail
  paramKind: {apiVersion: v1, kind: ConfigMap}
  matchConstraints:
    resourceRules:
    - {apiGroups: [apps], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [deployments]}
`+scope+`  matchConditions:
  - {name: not-admins, expression: "!('system:masters' in request.userInfo.groups) || object.metadata.name != 'exempt'"}
  validations:
  - expression: object.spec.replicas <= int(params.data.max)
    messageExpression: "'replicas ' + string(object.spec.replicas) + ' exceed ' + params.data.max"
    reason: Forbidden
  auditAnnotations:
  - {key: replicas, valueExpression: "string(object.spec.replicas)"}
`)
	clusterObject(t, `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: `+limits+`}
spec:
  policyName: `+limits+`
  validationActions: [Deny]
  paramRef: {name: limits, parameterNotFoundAction: Deny}
  matchResources:
`+scope+`    objectSelector: {matchExpressions: [{key: tier, operator: NotIn, values: [batch]}]}
`)
	clusterObject(t, `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: `+flags+`}
spec:
  failurePolicy: Fail
  paramKind: {apiVersion: v1, kind: ConfigMap}
  matchConstraints:
    resourceRules:
    - {apiGroups: [apps], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [deployments]}
`+scope+`  validations:
  - expression: "!object.spec.template.spec.containers.exists(c, has(c.args) && c.args.exists(a, a == '--' + params.data.forbidden))"
    messageExpression: "'--' + params.data.forbidden + ' is not allowed'"
`)
	clusterObject(t, `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: `+flags+`-warn}
spec:
  policyName: `+flags+`
  validationActions: [Warn, Audit]
  paramRef: {selector: {matchLabels: {flags: 'on'}}, parameterNotFoundAction: Allow}
`)
	deploy := func(name, replicas, labels, args string) string {
		return "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: " + name + ", labels: {" + labels + "}}\nspec:\n  replicas: " + replicas +
			"\n  selector: {matchLabels: {app: " + name + "}}\n  template:\n    metadata: {labels: {app: " + name + "}}\n    spec:\n      containers: [{name: c, image: nginx, args: [" + args + "]}]\n"
	}
	waitForServer(t, ns, deploy("probe", "9", "", ""), func(_ *unstructured.Unstructured, err error) bool {
		return err != nil && strings.Contains(err.Error(), "exceed 4")
	})
	waitForServer(t, ns, deploy("probe", "1", "", "--debug"), func(_ *unstructured.Unstructured, _ error) bool {
		_, w, _ := serverDryRun(t, ns, deploy("probe", "1", "", "--debug"))
		return len(w) > 0
	})
	dir := t.TempDir()
	cases := []struct {
		name, manifest string
		code           int
	}{
		{"denied by a param read by name", deploy("big", "6", "", ""), 1},
		{"admitted", deploy("small", "2", "", ""), 0},
		{"left out by the object selector", deploy("batch", "6", "tier: batch", ""), 0},
		{"warned through params read by selector", deploy("flags", "1", "", "--trace, --debug"), 0},
		{"denied and warned", deploy("both", "7", "", "--trace"), 1},
	}
	for _, c := range cases {
		f := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-")+".yaml")
		writeFile(t, f, c.manifest)
		_, warnings, serr := serverDryRun(t, ns, c.manifest)
		r := ssa(t, "explain-conflict", "-n", ns, "-f", f, "-o", "json")
		a := admissionOf(t, r.stdout)
		if r.code != c.code || !a.Admission.Exact {
			t.Errorf("%s: exit %d (want %d), exact %v %q\n%s", c.name, r.code, c.code, a.Admission.Exact, a.Admission.Reasons, r.stderr)
		}
		// The denial, word for word.
		want := ""
		if serr != nil {
			want = serr.Error()
		}
		if a.Admission.Denied != want {
			t.Errorf("%s: predicted denial %q, the server's %q", c.name, a.Admission.Denied, want)
		}
		// The warnings the server returns.
		got := append([]string{}, a.Admission.Warnings...)
		sort.Strings(got)
		sort.Strings(warnings)
		if len(got)+len(warnings) > 0 && !reflect.DeepEqual(got, warnings) {
			t.Errorf("%s: predicted warnings %q, the server's %q", c.name, got, warnings)
		}
		// The whole object, with --verify.
		if v := ssa(t, "explain-conflict", "-n", ns, "-f", f, "--verify"); v.code != c.code || !strings.Contains(v.stdout, "agrees") {
			t.Errorf("%s --verify: exit %d\n%s\n%s", c.name, v.code, v.stdout, v.stderr)
		}
	}

	// A policy that asks the authorizer can't be evaluated here: not
	// exact (exit 4), named; --verify decides.
	authz := "e2e-authz-" + id
	clusterObject(t, `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: `+authz+`}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [services]}
`+scope+`  validations:
  - expression: "authorizer.group('').resource('services').namespace(object.metadata.namespace).check('delete').allowed()"
`)
	clusterObject(t, "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicyBinding\nmetadata: {name: "+authz+"}\nspec: {policyName: "+authz+", validationActions: [Deny]}\n")
	svc := "apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec: {ports: [{port: 80}]}\n"
	waitForServer(t, ns, svc, func(_ *unstructured.Unstructured, err error) bool { return err == nil })
	svcFile := filepath.Join(dir, "svc.yaml")
	writeFile(t, svcFile, svc)
	r := ssa(t, "explain-conflict", "-n", ns, "-f", svcFile, "-o", "json")
	if a := admissionOf(t, r.stdout); r.code != 4 || a.Admission.Exact || !strings.Contains(strings.Join(a.Admission.Reasons, "\n"), "authorizer") {
		t.Errorf("a policy that asks the authorizer: exit %d, %+v", r.code, *a.Admission)
	}
	mustSSA(t, 0, "explain-conflict", "-n", ns, "-f", svcFile, "--verify")

	// Without the companion the policies are matched, not evaluated: not
	// exact, and it says why.
	big := filepath.Join(dir, "denied-by-a-param-read-by-name.yaml")
	r = ssaEnv(t, []string{"KUBECTL_SSA_ADMISSION_EVAL=" + filepath.Join(dir, "missing")}, "explain-conflict", "-n", ns, "-f", big, "-o", "json")
	if a := admissionOf(t, r.stdout); r.code != 4 || a.Admission.Exact || !strings.Contains(strings.Join(a.Admission.Reasons, "\n"), "could not be evaluated") {
		t.Errorf("without the companion: exit %d, %+v\n%s", r.code, *a.Admission, r.stderr)
	}
}

// Mutating policies of both patch types: the prediction is the server's
// object. Two whose result depends on their order (the server runs them
// in the order of a Go map) make it not exact.
func TestAdmissionMutatingPoliciesEvaluated(t *testing.T) {
	ns := namespace(t)
	id := rand.String(5)
	scope := "    namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: " + ns + "}}\n"
	stamp, tier := "e2e-stamp-"+id, "e2e-tier-"+id
	mutatingPolicy := func(name, extra, mutation string) {
		clusterObject(t, `apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicy
metadata: {name: `+name+`}
spec:
  failurePolicy: Fail
  reinvocationPolicy: IfNeeded
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [configmaps]}
`+scope+extra+`  mutations:
`+mutation)
		clusterObject(t, "apiVersion: admissionregistration.k8s.io/v1\nkind: MutatingAdmissionPolicyBinding\nmetadata: {name: "+name+"}\nspec: {policyName: "+name+"}\n")
	}
	// A JSON patch that copies the app label, with a match condition.
	mutatingPolicy(stamp, `  matchConditions:
  - {name: has-app, expression: "has(object.metadata.labels) && 'app' in object.metadata.labels"}
`, `  - patchType: JSONPatch
    jsonPatch:
      expression: "[JSONPatch{op: 'add', path: '/metadata/annotations', value: {'app-copy': object.metadata.labels['app']}}]"
`)
	// An apply configuration that sets a label and a data key.
	mutatingPolicy(tier, "", `  - patchType: ApplyConfiguration
    applyConfiguration:
      expression: 'Object{metadata: Object.metadata{labels: {"tier": "gold"}}, data: {"mutated": "yes"}}'
`)
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg, labels: {app: web}}\ndata: {a: b}\n"
	waitForServer(t, ns, cm, func(o *unstructured.Unstructured, err error) bool {
		return err == nil && o.GetLabels()["tier"] == "gold" && o.GetAnnotations()["app-copy"] == "web"
	})
	dir := t.TempDir()
	f := filepath.Join(dir, "cm.yaml")
	writeFile(t, f, cm)
	server, _, err := serverDryRun(t, ns, cm)
	if err != nil {
		t.Fatal(err)
	}
	mustSSA(t, 0, "explain-conflict", "-n", ns, "-f", f)
	// diff's result is the predicted object, and its changes say which
	// policy set what.
	dj := ssa(t, "diff", "-n", ns, "-f", f, "-o", "json").stdout
	a := admissionOf(t, dj)
	var changes struct {
		Changes []struct{ Path, SetBy string } `json:"changes"`
	}
	if err := json.Unmarshal([]byte(dj), &changes); err != nil {
		t.Fatal(err)
	}
	setBy := map[string]string{}
	for _, c := range changes.Changes {
		setBy[c.Path] = c.SetBy
	}
	if setBy[".metadata.labels.tier"] != "MutatingAdmissionPolicy "+tier+" (binding "+tier+")" || setBy[".metadata.annotations.app-copy"] != "MutatingAdmissionPolicy "+stamp+" (binding "+stamp+")" || setBy[".metadata.labels.app"] != "" {
		t.Errorf("setBy: %v", setBy)
	}
	if !a.Admission.Exact || a.steps() != "MutatingAdmissionPolicy "+stamp+" (binding "+stamp+") mutates; MutatingAdmissionPolicy "+tier+" (binding "+tier+") mutates" {
		t.Errorf("exact %v %q, steps %q", a.Admission.Exact, a.Admission.Reasons, a.steps())
	}
	result := &unstructured.Unstructured{Object: a.Result}
	if !reflect.DeepEqual(result.GetLabels(), server.GetLabels()) || !reflect.DeepEqual(result.GetAnnotations(), server.GetAnnotations()) || !reflect.DeepEqual(result.Object["data"], server.Object["data"]) {
		t.Errorf("predicted %v %v %v, the server's %v %v %v", result.GetLabels(), result.GetAnnotations(), result.Object["data"], server.GetLabels(), server.GetAnnotations(), server.Object["data"])
	}
	if v := ssa(t, "explain-conflict", "-n", ns, "-f", f, "--verify"); v.code != 0 || !strings.Contains(v.stdout, "agrees") {
		t.Errorf("--verify: exit %d\n%s\n%s", v.code, v.stdout, v.stderr)
	}
	// Applied, then re-applied: no change, and diff says so.
	if err := applyTry(ns, "kubectl", cm); err != nil {
		t.Fatal(err)
	}
	if d := ssa(t, "diff", "-n", ns, "-f", f); d.code != 0 {
		t.Errorf("diff after the apply: exit %d\n%s\n%s", d.code, d.stdout, d.stderr)
	}

	// A third policy copies the tier the second sets: their result
	// depends on the order, which the server does not fix.
	mutatingPolicy("e2e-copy-tier-"+id, `  matchConditions:
  - {name: has-tier, expression: "has(object.metadata.labels) && 'tier' in object.metadata.labels"}
`, `  - patchType: ApplyConfiguration
    applyConfiguration:
      expression: 'Object{data: {"tier-copy": object.metadata.labels["tier"]}}'
`)
	other := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: other}\ndata: {a: b}\n"
	waitForServer(t, ns, other, func(o *unstructured.Unstructured, err error) bool {
		_, found, _ := unstructured.NestedString(o.Object, "data", "mutated")
		return err == nil && found
	})
	g := filepath.Join(dir, "other.yaml")
	writeFile(t, g, other)
	r := ssa(t, "explain-conflict", "-n", ns, "-f", g, "-o", "json")
	if a := admissionOf(t, r.stdout); r.code != 4 || a.Admission.Exact || !strings.Contains(strings.Join(a.Admission.Reasons, "\n"), "order") {
		t.Errorf("order-dependent policies: exit %d, %+v", r.code, *a.Admission)
	}
	_ = os.Remove(f)
}

// A webhook's matchConditions are evaluated as the server evaluates them:
// one that leaves the request out is not called (exact, exit 0), one that
// holds is (not exact, exit 4), and one that fails to evaluate under
// failurePolicy Fail is the server's denial, word for word.
func TestAdmissionWebhookMatchConditions(t *testing.T) {
	ns := namespace(t)
	id := rand.String(5)
	// Unreachable: the server's dry run fails if it calls it.
	hook := configMapWebhook("e2e-conditions-"+id, "conditions.example.com", ns, "Fail", `url: "https://127.0.0.1:1/mutate"`)
	hook = strings.Replace(hook, "  rules:\n", `  matchConditions:
  - {name: only-audited, expression: "object.metadata.name.startsWith('audited-')"}
  - {name: has-owner, expression: "object.data.owner != ''"}
  rules:
`, 1)
	clusterObject(t, hook)
	cm := func(name, data string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + name + ", labels: {webhook: 'on'}}\ndata: {" + data + "}\n"
	}
	left := cm("plain", "a: b")
	waitForServer(t, ns, cm("audited-probe", "owner: x"), func(_ *unstructured.Unstructured, err error) bool {
		return err != nil && strings.Contains(err.Error(), "conditions.example.com")
	})
	dir := t.TempDir()
	for _, c := range []struct {
		name, manifest string
		code           int
	}{
		{"left out by its conditions", left, 0},
		{"called", cm("audited-web", "owner: team"), 4},
		{"conditions fail to evaluate", cm("audited-none", "a: b"), 1},
	} {
		f := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-")+".yaml")
		writeFile(t, f, c.manifest)
		r := ssa(t, "explain-conflict", "-n", ns, "-f", f, "-o", "json")
		a := admissionOf(t, r.stdout)
		if r.code != c.code {
			t.Errorf("%s: exit %d, want %d: %+v\n%s", c.name, r.code, c.code, *a.Admission, r.stderr)
		}
		if c.code == 1 {
			_, _, serr := serverDryRun(t, ns, c.manifest)
			if serr == nil || a.Admission.Denied != serr.Error() {
				t.Errorf("%s: predicted denial %q, the server's %v", c.name, a.Admission.Denied, serr)
			}
		}
		if c.code == 0 {
			mustSSA(t, 0, "explain-conflict", "-n", ns, "-f", f, "--verify")
		}
	}
}

// Policies see the object the server's admission sees: a Secret's
// stringData written into its data, and the defaults (a mutating policy
// that changes a defaulted field, or adds a container, gets the server's
// defaults after it).
func TestAdmissionPoliciesSeeTheServersObject(t *testing.T) {
	ns := namespace(t)
	id := rand.String(5)
	scope := "    namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: " + ns + "}}\n"
	password, shipper := "e2e-password-"+id, "e2e-shipper-"+id
	clusterObject(t, `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: `+password+`}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [secrets]}
`+scope+`  validations:
  - {expression: "has(object.data) && 'password' in object.data", message: "secrets need a password"}
`)
	clusterObject(t, "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicyBinding\nmetadata: {name: "+password+"}\nspec: {policyName: "+password+", validationActions: [Deny]}\n")
	clusterObject(t, `apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicy
metadata: {name: `+shipper+`}
spec:
  failurePolicy: Fail
  reinvocationPolicy: Never
  matchConstraints:
    resourceRules:
    - {apiGroups: [apps], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [deployments]}
`+scope+`  mutations:
  - patchType: ApplyConfiguration
    applyConfiguration:
      expression: >
        Object{spec: Object.spec{revisionHistoryLimit: 4, template: Object.spec.template{spec: Object.spec.template.spec{
          containers: [Object.spec.template.spec.containers{name: "log-shipper", image: "busybox"}]}}}}
`)
	clusterObject(t, "apiVersion: admissionregistration.k8s.io/v1\nkind: MutatingAdmissionPolicyBinding\nmetadata: {name: "+shipper+"}\nspec: {policyName: "+shipper+"}\n")
	// A validating policy that needs the defaults of the container the
	// mutating policy adds: the server defaults it before validating it.
	defaulted := "e2e-defaulted-" + id
	clusterObject(t, `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: `+defaulted+`}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - {apiGroups: [apps], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [deployments]}
`+scope+`  validations:
  - {expression: "object.spec.template.spec.containers.all(c, has(c.imagePullPolicy))", message: "containers need their defaults"}
`)
	clusterObject(t, "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicyBinding\nmetadata: {name: "+defaulted+"}\nspec: {policyName: "+defaulted+", validationActions: [Deny]}\n")
	secret := "apiVersion: v1\nkind: Secret\nmetadata: {name: creds}\nstringData: {password: S3CR3T-pw}\n"
	deploy := "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: 1\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec: {containers: [{name: web, image: nginx}]}\n"
	waitForServer(t, ns, "apiVersion: v1\nkind: Secret\nmetadata: {name: probe}\ndata: {a: Yg==}\n", func(_ *unstructured.Unstructured, err error) bool {
		return err != nil && strings.Contains(err.Error(), "secrets need a password")
	})
	waitForServer(t, ns, deploy, func(o *unstructured.Unstructured, err error) bool {
		rhl, _, _ := unstructured.NestedInt64(o.Object, "spec", "revisionHistoryLimit")
		return err == nil && rhl == 4
	})
	dir := t.TempDir()
	for name, manifest := range map[string]string{"secret.yaml": secret, "deploy.yaml": deploy} {
		f := filepath.Join(dir, name)
		writeFile(t, f, manifest)
		v := ssa(t, "explain-conflict", "-n", ns, "-f", f, "--verify")
		if v.code != 0 || !strings.Contains(v.stdout, "agrees") || strings.Contains(v.stdout+v.stderr, "S3CR3T") {
			t.Errorf("%s --verify: exit %d\n%s\n%s", name, v.code, v.stdout, v.stderr)
		}
	}
	server, _, err := serverDryRun(t, ns, deploy)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Result map[string]any `json:"result"`
	}
	if err := json.Unmarshal([]byte(ssa(t, "diff", "-n", ns, "-f", filepath.Join(dir, "deploy.yaml"), "-o", "json").stdout), &d); err != nil {
		t.Fatal(err)
	}
	for _, path := range [][]string{{"spec", "revisionHistoryLimit"}, {"spec", "template", "spec", "containers"}} {
		got, _, _ := unstructured.NestedFieldNoCopy(d.Result, path...)
		want, _, _ := unstructured.NestedFieldNoCopy(server.Object, path...)
		gb, _ := json.Marshal(got)
		wb, _ := json.Marshal(want)
		if string(gb) != string(wb) {
			t.Errorf(".%s: predicted %v, the server's %v", strings.Join(path, "."), got, want)
		}
	}
}

// Issue 35: a MutatingAdmissionPolicy that adds one env var read as
// "replaces .spec.template.spec.containers with the items ...": it is that
// one entry added, and the prediction is the server's.
func TestAdmissionPolicyAddsOneEnvVar(t *testing.T) {
	ns := namespace(t)
	name := "e2e-env-" + rand.String(5)
	clusterObject(t, `apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicy
metadata: {name: `+name+`}
spec:
  failurePolicy: Fail
  reinvocationPolicy: Never
  matchConstraints:
    resourceRules:
    - {apiGroups: [apps], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [deployments]}
    namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: `+ns+`}}
  mutations:
  - patchType: ApplyConfiguration
    applyConfiguration:
      expression: 'Object{spec: Object.spec{template: Object.spec.template{spec: Object.spec.template.spec{containers: [Object.spec.template.spec.containers{name: "nginx", env: [Object.spec.template.spec.containers.env{name: "REGION", value: "eu"}]}]}}}}'
`)
	clusterObject(t, "apiVersion: admissionregistration.k8s.io/v1\nkind: MutatingAdmissionPolicyBinding\nmetadata: {name: "+name+"}\nspec: {policyName: "+name+"}\n")
	// The manifest has an env var of its own: the policy adds one more.
	web := strings.Replace(deployment, "        image: nginx:1.27\n", "        image: nginx:1.27\n        env: [{name: MODE, value: prod}]\n", 1)
	waitForServer(t, ns, web, func(o *unstructured.Unstructured, err error) bool {
		if err != nil {
			return false
		}
		cs, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
		return len(cs) == 1 && strings.Contains(fmt.Sprint(cs[0]), "REGION")
	})
	f := filepath.Join(t.TempDir(), "web.yaml")
	writeFile(t, f, web)
	d := ssa(t, "diff", "-n", ns, "-f", f)
	want := `adds {"name":"REGION","value":"eu"} to .spec.template.spec.containers[name="nginx"].env`
	if !strings.Contains(d.stdout, want) || strings.Contains(d.stdout, "replaces .spec.template.spec.containers") {
		t.Errorf("diff does not say %q:\n%s\n%s", want, d.stdout, d.stderr)
	}
	if v := ssa(t, "explain-conflict", "-n", ns, "-f", f, "--verify"); v.code != 0 || !strings.Contains(v.stdout, "agrees") {
		t.Errorf("--verify: exit %d\n%s\n%s", v.code, v.stdout, v.stderr)
	}
}
