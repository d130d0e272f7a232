package admission

import (
	"errors"
	"sort"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
)

func obj(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

var deployments = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}

func steps(r *v1alpha1.AdmissionReport) string {
	var s []string
	for _, st := range r.Steps {
		s = append(s, string(st.Kind)+" "+st.Name+" "+string(st.Effect))
	}
	return strings.Join(s, "; ")
}

func webhook(t *testing.T, rules, extra string) *unstructured.Unstructured {
	return obj(t, "metadata: {name: cfg}\nwebhooks:\n- name: w.example.com\n  rules: "+rules+"\n"+extra)
}

// The rules match as the apiserver's rule matcher does.
func TestWebhookRules(t *testing.T) {
	deploy := obj(t, "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: ns, labels: {app: web}}\n")
	req := Request{Object: deploy, Resource: deployments, Namespaced: true, NamespaceLabels: map[string]string{"env": "prod"}}
	update := req
	update.Old = deploy
	for _, c := range []struct {
		name, rules, extra string
		req                Request
		match              bool
	}{
		{"exact", `[{operations: [CREATE], apiGroups: [apps], apiVersions: [v1], resources: [deployments]}]`, "", req, true},
		{"another operation", `[{operations: [DELETE], apiGroups: [apps], apiVersions: [v1], resources: [deployments]}]`, "", req, false},
		{"an apply to an existing object is an UPDATE", `[{operations: [UPDATE], apiGroups: [apps], apiVersions: [v1], resources: [deployments]}]`, "", update, true},
		{"wildcards", `[{operations: ["*"], apiGroups: ["*"], apiVersions: ["*"], resources: ["*"]}]`, "", req, true},
		{"another group", `[{operations: ["*"], apiGroups: [""], apiVersions: ["*"], resources: ["*"]}]`, "", req, false},
		{"another version, Equivalent", `[{operations: ["*"], apiGroups: [apps], apiVersions: [v1beta1], resources: [deployments]}]`, "", req, true},
		{"another version, Exact", `[{operations: ["*"], apiGroups: [apps], apiVersions: [v1beta1], resources: [deployments]}]`, "  matchPolicy: Exact\n", req, false},
		{"a subresource", `[{operations: ["*"], apiGroups: ["*"], apiVersions: ["*"], resources: ["deployments/scale"]}]`, "", req, false},
		{"res/* matches the resource too (the apiserver's splitResource)", `[{operations: ["*"], apiGroups: ["*"], apiVersions: ["*"], resources: ["deployments/*"]}]`, "", req, true},
		{"*/* matches the resource too", `[{operations: ["*"], apiGroups: ["*"], apiVersions: ["*"], resources: ["*/*"]}]`, "", req, true},
		{"cluster scope", `[{operations: ["*"], apiGroups: ["*"], apiVersions: ["*"], resources: ["*"], scope: Cluster}]`, "", req, false},
		{"namespaced scope", `[{operations: ["*"], apiGroups: ["*"], apiVersions: ["*"], resources: ["*"], scope: Namespaced}]`, "", req, true},
		{"namespace selector", `[{operations: ["*"], apiGroups: ["*"], apiVersions: ["*"], resources: ["*"]}]`, "  namespaceSelector: {matchLabels: {env: dev}}\n", req, false},
		{"namespace selector matches", `[{operations: ["*"], apiGroups: ["*"], apiVersions: ["*"], resources: ["*"]}]`, "  namespaceSelector: {matchExpressions: [{key: env, operator: In, values: [prod]}]}\n", req, true},
		{"object selector", `[{operations: ["*"], apiGroups: ["*"], apiVersions: ["*"], resources: ["*"]}]`, "  objectSelector: {matchLabels: {app: db}}\n", req, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := &Config{MutatingWebhooks: []*unstructured.Unstructured{webhook(t, c.rules, c.extra)}}
			r := Evaluate(cfg, c.req)
			if got := len(r.Steps) == 1; got != c.match {
				t.Fatalf("match %v, want %v (%s)", got, c.match, steps(r))
			}
			if r.Exact == c.match {
				t.Errorf("exact %v with match %v", r.Exact, c.match)
			}
		})
	}
}

// A namespace whose labels can't be read matches, with a caveat; match
// conditions are not evaluated, and say so.
func TestCaveats(t *testing.T) {
	deploy := obj(t, "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: ns}\n")
	cfg := &Config{ValidatingWebhooks: []*unstructured.Unstructured{webhook(t, `[{operations: ["*"], apiGroups: ["*"], apiVersions: ["*"], resources: ["*"]}]`,
		"  namespaceSelector: {matchLabels: {env: prod}}\n  matchConditions: [{name: c, expression: 'true'}]\n")}}
	r := Evaluate(cfg, Request{Object: deploy, Resource: deployments, Namespaced: true, NamespaceUnknown: true})
	hook := r.Steps[len(r.Steps)-1]
	if hook.Kind != v1alpha1.ValidatingWebhook || hook.Effect != v1alpha1.EffectMayDeny || len(hook.Caveats) != 3 || r.Exact {
		t.Fatalf("%+v", r)
	}
	// failurePolicy defaults to Fail: an unreachable webhook refuses.
	if !strings.HasPrefix(hook.Caveats[2], "failurePolicy Fail") {
		t.Errorf("caveats %q", hook.Caveats)
	}
}

// A policy acts through its bindings: validationActions decide the
// effect; a binding's matchResources narrow the policy's; excluded
// resources don't match.
func TestPolicies(t *testing.T) {
	deploy := obj(t, "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: ns}\n")
	req := Request{Object: deploy, Resource: deployments, Namespaced: true, NamespaceLabels: map[string]string{"kubernetes.io/metadata.name": "ns"}}
	policy := obj(t, "metadata: {name: p}\nspec:\n  matchConstraints:\n    resourceRules: [{operations: ['*'], apiGroups: [apps], apiVersions: ['*'], resources: [deployments]}]\n")
	excluding := obj(t, "metadata: {name: x}\nspec:\n  matchConstraints:\n    resourceRules: [{operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*']}]\n    excludeResourceRules: [{operations: ['*'], apiGroups: [apps], apiVersions: ['*'], resources: [deployments]}]\n")
	binding := func(name, policy, spec string) *unstructured.Unstructured {
		return obj(t, "metadata: {name: "+name+"}\nspec:\n  policyName: "+policy+"\n"+spec)
	}
	cfg := &Config{
		ValidatingPolicies: []*unstructured.Unstructured{policy, excluding},
		ValidatingBindings: []*unstructured.Unstructured{
			binding("deny", "p", "  validationActions: [Deny, Audit]\n"),
			binding("warn", "p", "  validationActions: [Warn]\n"),
			binding("audit", "p", "  validationActions: [Audit]\n"),
			binding("elsewhere", "p", "  validationActions: [Deny]\n  matchResources: {namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: other}}}\n"),
			binding("here", "p", "  validationActions: [Deny]\n  matchResources: {namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: ns}}}\n"),
			binding("excluded", "x", "  validationActions: [Deny]\n"),
			binding("orphan", "nosuch", "  validationActions: [Deny]\n"),
		},
	}
	r := Evaluate(cfg, req)
	want := "ValidatingAdmissionPolicy p (binding audit) audits; ValidatingAdmissionPolicy p (binding deny) may-deny; ValidatingAdmissionPolicy p (binding here) may-deny; ValidatingAdmissionPolicy p (binding warn) may-warn"
	if steps(r) != want || r.Exact || len(r.Reasons) != 2 {
		t.Errorf("steps %q\nwant  %q\nreasons %q", steps(r), want, r.Reasons)
	}
	// Warn and Audit alone leave the outcome known.
	cfg.ValidatingBindings = cfg.ValidatingBindings[1:3]
	if r := Evaluate(cfg, req); !r.Exact {
		t.Errorf("warn and audit only: not exact: %q", r.Reasons)
	}
}

// The built-in plugins set what the apiserver's code sets, on create only.
func TestBuiltins(t *testing.T) {
	older, newer := metav1.NewTime(time.Unix(1000, 0)), metav1.NewTime(time.Unix(2000, 0))
	class := func(name string, at metav1.Time, def string) *unstructured.Unstructured {
		u := obj(t, "metadata: {name: "+name+", annotations: {storageclass.kubernetes.io/is-default-class: '"+def+"'}}\n")
		u.SetCreationTimestamp(at)
		return u
	}
	cfg := &Config{StorageClasses: []*unstructured.Unstructured{class("old", older, "true"), class("b-new", newer, "true"), class("a-new", newer, "true"), class("newest", metav1.NewTime(time.Unix(3000, 0)), "false")}}
	pvcs := schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumeclaims"}
	pvc := obj(t, "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data, namespace: ns, finalizers: [example.com/keep]}\nspec: {}\n")
	r := Evaluate(cfg, Request{Object: pvc, Resource: pvcs, Namespaced: true})
	if !r.Exact || steps(r) != "BuiltinPlugin DefaultStorageClass mutates; BuiltinPlugin StorageObjectInUseProtection mutates" {
		t.Fatalf("%s", steps(r))
	}
	out := pvc.DeepCopy()
	Apply(r, out)
	if sc, _, _ := unstructured.NestedString(out.Object, "spec", "storageClassName"); sc != "a-new" {
		t.Errorf("storageClassName %q, want the newest default, first by name: a-new", sc)
	}
	if f := out.GetFinalizers(); len(f) != 2 || f[1] != "kubernetes.io/pvc-protection" {
		t.Errorf("finalizers %q", f)
	}
	// An update, or a class asked for (even ""), gets no default class.
	if r := Evaluate(cfg, Request{Object: pvc, Old: pvc, Resource: pvcs, Namespaced: true}); len(r.Steps) != 0 {
		t.Errorf("update: %s", steps(r))
	}
	_ = unstructured.SetNestedField(pvc.Object, "", "spec", "storageClassName")
	if r := Evaluate(cfg, Request{Object: pvc, Resource: pvcs, Namespaced: true}); steps(r) != "BuiltinPlugin StorageObjectInUseProtection mutates" {
		t.Errorf("explicit class: %s", steps(r))
	}
}

// Policies and webhooks are not called for admission's own configuration.
func TestExempt(t *testing.T) {
	cfg := &Config{MutatingWebhooks: []*unstructured.Unstructured{webhook(t, `[{operations: ["*"], apiGroups: ["*"], apiVersions: ["*"], resources: ["*"]}]`, "")}}
	vap := obj(t, "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata: {name: p}\n")
	r := Evaluate(cfg, Request{Object: vap, Resource: schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingadmissionpolicies"}})
	if len(r.Steps) != 0 || !r.Exact {
		t.Errorf("%s", steps(r))
	}
}

// What could not be listed makes the answer not exact.
func TestUnreadable(t *testing.T) {
	r := Evaluate(&Config{Unreadable: []string{"could not list webhooks"}}, Request{Object: obj(t, "metadata: {name: x}\n"), Resource: deployments})
	if r.Exact || len(r.Reasons) != 1 {
		t.Errorf("%+v", r)
	}
}

// PodSecurity: a template warns at the warn level, a Pod is denied at the
// enforced one, and a Pod's update that changes no image is not checked.
func TestPodSecurity(t *testing.T) {
	labels := map[string]string{"pod-security.kubernetes.io/enforce": "baseline", "pod-security.kubernetes.io/warn": "restricted"}
	deploy := obj(t, "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: ns}\nspec:\n  template:\n    spec:\n      containers: [{name: c, image: nginx}]\n")
	r := Evaluate(&Config{}, Request{Object: deploy, Resource: deployments, Namespaced: true, NamespaceLabels: labels})
	if len(r.Warnings) != 1 || !strings.HasPrefix(r.Warnings[0], `would violate PodSecurity "restricted:latest": allowPrivilegeEscalation != false`) || r.Denied != "" || !r.Exact {
		t.Errorf("template: %+v", r)
	}
	podsGVR := schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	host := obj(t, "apiVersion: v1\nkind: Pod\nmetadata: {name: host, namespace: ns}\nspec:\n  hostNetwork: true\n  containers: [{name: c, image: nginx}]\n")
	r = Evaluate(&Config{}, Request{Object: host, Resource: podsGVR, Namespaced: true, NamespaceLabels: labels})
	if r.Denied != `pods "host" is forbidden: violates PodSecurity "baseline:latest": host namespaces (hostNetwork=true)` || len(r.Warnings) != 0 {
		t.Errorf("pod: denied %q, warnings %q", r.Denied, r.Warnings)
	}
	r = Evaluate(&Config{}, Request{Object: host, Old: host, Resource: podsGVR, Namespaced: true, NamespaceLabels: labels})
	if r.Denied != "" {
		t.Errorf("an update that changes no image is checked: %q", r.Denied)
	}
	// No labels: privileged, nothing said.
	if r := Evaluate(&Config{}, Request{Object: deploy, Resource: deployments, Namespaced: true}); len(r.Steps) != 0 {
		t.Errorf("unlabelled namespace: %s", steps(r))
	}
}

// PodSecurity checks the kinds of pod-security-admission's
// DefaultPodSpecExtractor, at the pod templates it reads, taken from the
// defaults' pod-spec table.
func TestPodTemplatePaths(t *testing.T) {
	var got []string
	for gr := range podSecurityKinds {
		if !PodSecurityChecks(gr) {
			t.Errorf("%v is not checked", gr)
		}
		got = append(got, gr.String()+" "+strings.Join(podTemplatePath(gr), "."))
	}
	sort.Strings(got)
	want := []string{
		"cronjobs.batch spec.jobTemplate.spec.template",
		"daemonsets.apps spec.template",
		"deployments.apps spec.template",
		"jobs.batch spec.template",
		"podtemplates template",
		"replicasets.apps spec.template",
		"replicationcontrollers spec.template",
		"statefulsets.apps spec.template",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A Namespace's own PodSecurity labels: invalid ones are refused (on
// update only when they changed); a stricter enforce level may warn; a
// namespace whose labels can't be read leaves PodSecurity unevaluated,
// and says so.
func TestPodSecurityNamespace(t *testing.T) {
	nsGVR := schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	bad := obj(t, "apiVersion: v1\nkind: Namespace\nmetadata: {name: ns1, labels: {pod-security.kubernetes.io/enforce: bogus}}\n")
	good := obj(t, "apiVersion: v1\nkind: Namespace\nmetadata: {name: ns1, labels: {pod-security.kubernetes.io/enforce: restricted}}\n")
	plain := obj(t, "apiVersion: v1\nkind: Namespace\nmetadata: {name: ns1}\n")
	if r := Evaluate(&Config{}, Request{Object: bad, Resource: nsGVR}); !strings.HasPrefix(r.Denied, `Namespace "ns1" is invalid: metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: "bogus"`) {
		t.Errorf("create: %q", r.Denied)
	}
	if r := Evaluate(&Config{}, Request{Object: bad, Old: bad, Resource: nsGVR}); r.Denied != "" {
		t.Errorf("unchanged invalid labels are refused: %q", r.Denied)
	}
	if r := Evaluate(&Config{}, Request{Object: good, Old: plain, Resource: nsGVR}); steps(r) != "BuiltinPlugin PodSecurity may-warn" || !r.Exact {
		t.Errorf("stricter enforce: %s", steps(r))
	}
	podsGVR := schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	pod := obj(t, "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: n}\nspec: {containers: [{name: c, image: nginx}]}\n")
	if r := Evaluate(&Config{}, Request{Object: pod, Old: pod, Resource: podsGVR, Namespaced: true, NamespaceUnknown: true}); steps(r) != "BuiltinPlugin DefaultTolerationSeconds mutates; BuiltinPlugin PodSecurity may-deny" || r.Exact {
		t.Errorf("unreadable namespace: %s, exact %v", steps(r), r.Exact)
	}
}

// A new Node gets the not-ready taint, unless it has it; updates don't.
func TestTaintNodesByCondition(t *testing.T) {
	nodes := schema.GroupVersionResource{Version: "v1", Resource: "nodes"}
	node := obj(t, "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nspec: {taints: [{key: example.com/t, effect: NoSchedule}]}\n")
	r := Evaluate(&Config{}, Request{Object: node, Resource: nodes})
	if !r.Exact || steps(r) != "BuiltinPlugin TaintNodesByCondition mutates" {
		t.Fatalf("%s", steps(r))
	}
	out := node.DeepCopy()
	Apply(r, out)
	if taints, _, _ := unstructured.NestedSlice(out.Object, "spec", "taints"); len(taints) != 2 || taints[1].(map[string]any)["key"] != "node.kubernetes.io/not-ready" {
		t.Errorf("taints %v", taints)
	}
	if r := Evaluate(&Config{}, Request{Object: out, Resource: nodes}); len(r.Steps) != 0 {
		t.Errorf("tainted already: %s", steps(r))
	}
	if r := Evaluate(&Config{}, Request{Object: node, Old: node, Resource: nodes}); len(r.Steps) != 0 {
		t.Errorf("update: %s", steps(r))
	}
}

// fixedEvaluator answers with a fixed result and keeps the request.
type fixedEvaluator struct {
	res *PolicyResult
	err error
	got *PolicyRequest
}

func (e *fixedEvaluator) EvaluatePolicies(req *PolicyRequest) (*PolicyResult, error) {
	e.got = req
	return e.res, e.err
}

// An evaluation replaces the matched steps by what each binding did; two
// denials are both answers the server may give; an evaluator that fails
// leaves them matched, not exact.
func TestEvaluatedPolicies(t *testing.T) {
	deploy := obj(t, "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: ns, labels: {app: web}}\n")
	req := Request{Object: deploy, Resource: deployments, Namespaced: true, NamespaceLabels: map[string]string{}}
	policy := func(name string) *unstructured.Unstructured {
		return obj(t, "metadata: {name: "+name+"}\nspec:\n  matchConstraints:\n    resourceRules: [{operations: ['*'], apiGroups: [apps], apiVersions: ['*'], resources: [deployments]}]\n")
	}
	binding := func(name, actions string) *unstructured.Unstructured {
		return obj(t, "metadata: {name: "+name+"}\nspec:\n  policyName: "+name+"\n  validationActions: ["+actions+"]\n")
	}
	e := &fixedEvaluator{res: &PolicyResult{
		Denied: "denied by a",
		Object: obj(t, "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: ns, labels: {app: web, stamped: 'yes'}}\n"),
		Bindings: []BindingResult{
			{Kind: v1alpha1.MutatingAdmissionPolicy, Policy: "m", Binding: "m", Outcome: Mutated, Paths: [][]string{{"metadata", "labels", "stamped"}}},
			{Kind: v1alpha1.ValidatingAdmissionPolicy, Policy: "a", Binding: "a", Outcome: Denied, Messages: []string{"denied by a"}},
			{Kind: v1alpha1.ValidatingAdmissionPolicy, Policy: "b", Binding: "b", Outcome: Denied, Messages: []string{"denied by b"}},
			{Kind: v1alpha1.ValidatingAdmissionPolicy, Policy: "c", Binding: "c", Outcome: Warned, Messages: []string{"c warns"}},
		},
		Warnings: []string{"c warns"},
	}}
	cfg := &Config{
		ValidatingPolicies: []*unstructured.Unstructured{policy("a"), policy("b"), policy("c"), policy("d")},
		ValidatingBindings: []*unstructured.Unstructured{binding("a", "Deny"), binding("b", "Deny"), binding("c", "Warn"), binding("d", "Deny")},
		MutatingPolicies:   []*unstructured.Unstructured{policy("m")},
		MutatingBindings:   []*unstructured.Unstructured{obj(t, "metadata: {name: m}\nspec: {policyName: m}\n")},
		Policies:           e,
	}
	r := Evaluate(cfg, req)
	// d's match conditions left the request out: the evaluation has no
	// result for it, and it is dropped.
	want := "MutatingAdmissionPolicy m (binding m) mutates; ValidatingAdmissionPolicy a (binding a) denies; ValidatingAdmissionPolicy b (binding b) denies; ValidatingAdmissionPolicy c (binding c) warns"
	if steps(r) != want || !r.Exact || r.Denied != "denied by a" || strings.Join(r.Denials, "|") != "denied by a|denied by b" || strings.Join(r.Warnings, "|") != "c warns" {
		t.Errorf("steps %q\nwant  %q\nexact %v %q, denied %q %q, warnings %q", steps(r), want, r.Exact, r.Reasons, r.Denied, r.Denials, r.Warnings)
	}
	if len(e.got.ValidatingBindings) != 4 || len(e.got.MutatingBindings) != 1 || e.got.Operation != "CREATE" {
		t.Errorf("request: %d validating and %d mutating bindings, %s", len(e.got.ValidatingBindings), len(e.got.MutatingBindings), e.got.Operation)
	}
	applied := deploy.DeepCopy()
	Apply(r, applied)
	if applied.GetLabels()["stamped"] != "yes" {
		t.Errorf("the mutation is not in the prediction: %v", applied.GetLabels())
	}
	// The evaluator fails: matched, not exact, and why.
	e.err, e.res = errors.New("ssa-admission-eval is not installed"), nil
	r = Evaluate(cfg, req)
	if r.Exact || r.Denied != "" || !strings.Contains(strings.Join(r.Reasons, "\n"), "could not be evaluated here: ssa-admission-eval is not installed") {
		t.Errorf("a failing evaluator: exact %v, %q", r.Exact, r.Reasons)
	}
}
