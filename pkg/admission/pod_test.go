package admission

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/pathlang"
)

var podsGVR = schema.GroupVersionResource{Version: "v1", Resource: "pods"}

// podCreate evaluates the create of pod (YAML of its spec and metadata
// beyond the name) with reads, and returns the report and the Pod it
// predicts.
func podCreate(t *testing.T, reads *PodReads, doc string) (*v1alpha1.AdmissionReport, *unstructured.Unstructured) {
	t.Helper()
	pod := obj(t, "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ns}\n"+doc)
	r := Evaluate(&Config{Pod: reads}, Request{Object: pod, Resource: podsGVR, Namespaced: true})
	out := pod.DeepCopy()
	Apply(r, out)
	return r, out
}

func defaultSA(t *testing.T) *unstructured.Unstructured {
	return obj(t, "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: default, namespace: ns}\n")
}

func at(t *testing.T, u *unstructured.Unstructured, path ...string) string {
	t.Helper()
	v, ok := lookup(u.Object, path)
	if !ok {
		return "<none>"
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// ServiceAccount: the default account, its token volume (of a generated
// name, listed as unknown) mounted into every container that mounts
// nothing at the token's path, init containers too; none when the Pod or
// the account turns automount off; its image pull secrets; a missing
// account or an unmountable secret is the server's denial.
func TestServiceAccountPlugin(t *testing.T) {
	reads := &PodReads{ServiceAccount: defaultSA(t)}
	spec := "spec:\n  initContainers: [{name: i, image: busybox}]\n  containers:\n  - {name: c, image: nginx}\n  - {name: own, image: nginx, volumeMounts: [{name: mine, mountPath: /var/run/secrets/kubernetes.io/serviceaccount}]}\n"
	r, out := podCreate(t, reads, spec)
	if !r.Exact || steps(r) != "BuiltinPlugin ServiceAccount mutates; BuiltinPlugin Priority mutates; BuiltinPlugin DefaultTolerationSeconds mutates" {
		t.Fatalf("exact %v, steps %s", r.Exact, steps(r))
	}
	if got := at(t, out, "spec", "serviceAccountName") + at(t, out, "spec", "serviceAccount"); got != `"default""default"` {
		t.Errorf("service account: %s", got)
	}
	mount := `[{"mountPath":"/var/run/secrets/kubernetes.io/serviceaccount","name":"kube-api-access-","readOnly":true}]`
	for _, c := range []string{"initContainers", "containers"} {
		name := map[string]string{"initContainers": "i", "containers": "c"}[c]
		if got := at(t, out, "spec", c, pathlang.ItemSegment("name", name), "volumeMounts"); got != mount {
			t.Errorf("%s %s mounts %s", c, name, got)
		}
	}
	if got := at(t, out, "spec", "containers", pathlang.ItemSegment("name", "own"), "volumeMounts"); strings.Contains(got, "kube-api-access") {
		t.Errorf("a container that mounts the path gets the token too: %s", got)
	}
	if got := at(t, out, "spec", "volumes"); !strings.HasPrefix(got, `[{"name":"kube-api-access-","projected":{"defaultMode":420,"sources":[{"serviceAccountToken":{"expirationSeconds":3607,"path":"token"}}`) {
		t.Errorf("volumes %s", got)
	}
	want := []string{
		`.spec.volumes[name="kube-api-access-"].name`,
		`.spec.initContainers[name="i"].volumeMounts[mountPath="/var/run/secrets/kubernetes.io/serviceaccount"].name`,
		`.spec.containers[name="c"].volumeMounts[mountPath="/var/run/secrets/kubernetes.io/serviceaccount"].name`,
	}
	var got []string
	for _, p := range r.Unknown() {
		got = append(got, p.String())
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("unknown (-want +got):\n%s", diff)
	}

	// A token volume of the Pod's own is used, and its name is known.
	_, out = podCreate(t, reads, "spec:\n  volumes: [{name: kube-api-access-mine, emptyDir: {}}]\n  containers: [{name: c, image: nginx}]\n")
	if got := at(t, out, "spec", "containers", pathlang.ItemSegment("name", "c"), "volumeMounts"); !strings.Contains(got, `"name":"kube-api-access-mine"`) {
		t.Errorf("own token volume: mounts %s", got)
	}
	if got := at(t, out, "spec", "volumes"); strings.Count(got, "kube-api-access") != 1 {
		t.Errorf("own token volume: volumes %s", got)
	}

	// Automount off, on the Pod or on the account: no token.
	for _, c := range []struct {
		name, sa, spec string
		mounted        bool
	}{
		{"pod off", "", "spec:\n  automountServiceAccountToken: false\n  containers: [{name: c, image: nginx}]\n", false},
		{"account off", "automountServiceAccountToken: false\n", "spec:\n  containers: [{name: c, image: nginx}]\n", false},
		{"pod on wins", "automountServiceAccountToken: false\n", "spec:\n  automountServiceAccountToken: true\n  containers: [{name: c, image: nginx}]\n", true},
	} {
		sa := obj(t, "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: default, namespace: ns}\n"+c.sa)
		r, out := podCreate(t, &PodReads{ServiceAccount: sa}, c.spec)
		if got := at(t, out, "spec", "volumes") != "<none>"; got != c.mounted || len(r.Unknown()) > 0 != c.mounted {
			t.Errorf("%s: mounted %v, unknown %v", c.name, got, r.Unknown())
		}
	}

	// The account's image pull secrets, when the Pod has none.
	sa := obj(t, "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: robot, namespace: ns}\nimagePullSecrets: [{name: regcred}]\n")
	_, out = podCreate(t, &PodReads{ServiceAccount: sa}, "spec:\n  serviceAccountName: robot\n  containers: [{name: c, image: nginx}]\n")
	if got := at(t, out, "spec", "imagePullSecrets"); got != `[{"name":"regcred"}]` {
		t.Errorf("imagePullSecrets %s", got)
	}
	_, out = podCreate(t, &PodReads{ServiceAccount: sa}, "spec:\n  serviceAccountName: robot\n  imagePullSecrets: [{name: own}]\n  containers: [{name: c, image: nginx}]\n")
	if got := at(t, out, "spec", "imagePullSecrets"); got != `[{"name":"own"}]` {
		t.Errorf("own imagePullSecrets %s", got)
	}

	// Denials, word for word.
	r, _ = podCreate(t, &PodReads{}, "spec:\n  serviceAccount: ghost\n  containers: [{name: c, image: nginx}]\n")
	if r.Denied != `pods "p" is forbidden: error looking up service account ns/ghost: serviceaccount "ghost" not found` || steps(r) != "BuiltinPlugin ServiceAccount denies" {
		t.Errorf("missing account: %q (%s)", r.Denied, steps(r))
	}
	strict := obj(t, "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: default, namespace: ns, annotations: {kubernetes.io/enforce-mountable-secrets: 'true'}}\nsecrets: [{name: ok}]\n")
	r, _ = podCreate(t, &PodReads{ServiceAccount: strict}, "spec:\n  containers: [{name: c, image: nginx, env: [{name: A, valueFrom: {secretKeyRef: {name: ok, key: k}}}, {name: B, valueFrom: {secretKeyRef: {name: other, key: k}}}]}]\n")
	if r.Denied != `pods "p" is forbidden: container c with envVar B referencing secret.secretName="other" is not allowed because service account default does not reference that secret` {
		t.Errorf("unmountable secret: %q", r.Denied)
	}
	// A read that failed is said, and not exact.
	r, _ = podCreate(t, &PodReads{Unread: map[string]string{serviceAccount: "could not get serviceaccounts default (forbidden)"}}, "spec:\n  containers: [{name: c, image: nginx}]\n")
	if r.Exact || r.Denied != "" || !strings.Contains(strings.Join(r.Reasons, "\n"), "could not get serviceaccounts default (forbidden)") {
		t.Errorf("unread: exact %v, denied %q, reasons %q", r.Exact, r.Denied, r.Reasons)
	}
}

// Priority: the global default class (the lowest valued if several), else
// 0 and PreemptLowerPriority; a named class's value and policy; a missing
// class, or a priority that differs, is denied.
func TestPriorityPlugin(t *testing.T) {
	class := func(name, value, extra string) *unstructured.Unstructured {
		return obj(t, "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: "+name+"}\nvalue: "+value+"\n"+extra)
	}
	containers := "  containers: [{name: c, image: nginx}]\n"
	for _, c := range []struct {
		name    string
		classes []*unstructured.Unstructured
		spec    string
		want    string // priorityClassName priority preemptionPolicy
		denied  string
		exact   bool
	}{
		{"no default", []*unstructured.Unstructured{class("high", "100", "")}, "", `<none> 0 "PreemptLowerPriority"`, "", true},
		{"the default", []*unstructured.Unstructured{class("high", "100", "globalDefault: true\npreemptionPolicy: Never\n")}, "", `"high" 100 "Never"`, "", true},
		{"the lowest default", []*unstructured.Unstructured{class("b", "100", "globalDefault: true\n"), class("a", "50", "globalDefault: true\n")}, "", `"a" 50 <none>`, "", true},
		{"two defaults of one value", []*unstructured.Unstructured{class("b", "50", "globalDefault: true\n"), class("a", "50", "globalDefault: true\n")}, "", `"a" 50 <none>`, "", false},
		{"named", []*unstructured.Unstructured{class("high", "100", "preemptionPolicy: PreemptLowerPriority\n"), class("d", "1", "globalDefault: true\n")}, "  priorityClassName: high\n", `"high" 100 "PreemptLowerPriority"`, "", true},
		{"the same priority given", []*unstructured.Unstructured{class("high", "100", "")}, "  priorityClassName: high\n  priority: 100\n", `"high" 100 <none>`, "", true},
		{"missing", nil, "  priorityClassName: nosuch\n", "", `pods "p" is forbidden: no PriorityClass with name nosuch was found`, true},
		{"another priority", nil, "  priority: 7\n", "", `pods "p" is forbidden: the integer value of priority (7) must not be provided in pod spec; priority admission controller computed 0 from the given PriorityClass name`, true},
		{"another policy", nil, "  preemptionPolicy: Never\n", "", `pods "p" is forbidden: the string value of PreemptionPolicy (Never) must not be provided in pod spec; priority admission controller computed PreemptLowerPriority from the given PriorityClass name`, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, out := podCreate(t, &PodReads{ServiceAccount: defaultSA(t), PriorityClasses: c.classes}, "spec:\n"+c.spec+containers)
			if r.Denied != c.denied || r.Exact != c.exact {
				t.Fatalf("denied %q, want %q; exact %v (%s)", r.Denied, c.denied, r.Exact, steps(r))
			}
			if c.denied != "" {
				return
			}
			got := at(t, out, "spec", "priorityClassName") + " " + at(t, out, "spec", "priority") + " " + at(t, out, "spec", "preemptionPolicy")
			if got != c.want {
				t.Errorf("got %s, want %s", got, c.want)
			}
		})
	}
}

// DefaultTolerationSeconds: the two NoExecute tolerations, unless the Pod
// tolerates the taint (its key or any, NoExecute or any effect); on
// updates too; appended to an atomic list the applier owns.
func TestDefaultTolerationSecondsPlugin(t *testing.T) {
	notReady := `{"effect":"NoExecute","key":"node.kubernetes.io/not-ready","operator":"Exists","tolerationSeconds":300}`
	unreachable := `{"effect":"NoExecute","key":"node.kubernetes.io/unreachable","operator":"Exists","tolerationSeconds":300}`
	for _, c := range []struct{ name, tolerations, want string }{
		{"none", "", "[" + notReady + "," + unreachable + "]"},
		{"not-ready tolerated", "[{key: node.kubernetes.io/not-ready, operator: Exists, effect: NoExecute, tolerationSeconds: 10}]",
			`[{"effect":"NoExecute","key":"node.kubernetes.io/not-ready","operator":"Exists","tolerationSeconds":10},` + unreachable + "]"},
		{"any effect", "[{key: node.kubernetes.io/unreachable, operator: Exists}]", `[{"key":"node.kubernetes.io/unreachable","operator":"Exists"},` + notReady + "]"},
		{"any key", "[{operator: Exists, effect: NoExecute}]", `[{"effect":"NoExecute","operator":"Exists"}]`},
		{"another effect", "[{operator: Exists, effect: NoSchedule}]", `[{"effect":"NoSchedule","operator":"Exists"},` + notReady + "," + unreachable + "]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			spec := "spec:\n  containers: [{name: c, image: nginx}]\n"
			if c.tolerations != "" {
				spec += "  tolerations: " + c.tolerations + "\n"
			}
			r, out := podCreate(t, &PodReads{ServiceAccount: defaultSA(t)}, spec)
			if got := at(t, out, "spec", "tolerations"); got != c.want {
				t.Errorf("tolerations\n got %s\nwant %s", got, c.want)
			}
			for _, s := range r.Steps {
				for _, op := range s.Ops {
					if s.Name == defaultTolerationSeconds && op.Atomic != (c.tolerations != "") {
						t.Errorf("atomic %v with tolerations %q", op.Atomic, c.tolerations)
					}
				}
			}
		})
	}
	pod := obj(t, "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ns}\nspec:\n  containers: [{name: c, image: nginx}]\n")
	if r := Evaluate(&Config{}, Request{Object: pod, Old: pod, Resource: podsGVR, Namespaced: true}); steps(r) != "BuiltinPlugin DefaultTolerationSeconds mutates" {
		t.Errorf("update: %s", steps(r))
	}
}

// RuntimeClass: the class's overhead and scheduling merged into the Pod
// (a toleration another covers dropped); a missing class, an overhead or
// a node selector that disagrees, an overhead without a class: denied.
func TestRuntimeClassPlugin(t *testing.T) {
	rc := obj(t, "apiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata: {name: gvisor}\nhandler: runsc\noverhead: {podFixed: {cpu: 250m}}\nscheduling:\n  nodeSelector: {sandbox: 'true'}\n  tolerations: [{key: sandbox, operator: Exists, effect: NoSchedule}]\n")
	reads := &PodReads{ServiceAccount: defaultSA(t), RuntimeClass: rc}
	containers := "  containers: [{name: c, image: nginx}]\n  automountServiceAccountToken: false\n"
	r, out := podCreate(t, reads, "spec:\n  runtimeClassName: gvisor\n  nodeSelector: {zone: a}\n"+containers)
	if !r.Exact || r.Denied != "" {
		t.Fatalf("exact %v, denied %q", r.Exact, r.Denied)
	}
	if got := at(t, out, "spec", "overhead") + " " + at(t, out, "spec", "nodeSelector"); got != `{"cpu":"250m"} {"sandbox":"true","zone":"a"}` {
		t.Errorf("overhead, nodeSelector: %s", got)
	}
	if got := at(t, out, "spec", "tolerations"); !strings.HasSuffix(got, `{"effect":"NoSchedule","key":"sandbox","operator":"Exists"}]`) || strings.Count(got, "key") != 3 {
		t.Errorf("tolerations %s", got)
	}
	// A toleration of everything covers the default ones and the class's:
	// the merge keeps it alone.
	_, out = podCreate(t, reads, "spec:\n  runtimeClassName: gvisor\n  tolerations: [{operator: Exists}]\n"+containers)
	if got := at(t, out, "spec", "tolerations"); got != `[{"operator":"Exists"}]` {
		t.Errorf("covered tolerations %s", got)
	}
	// The class's toleration covers the Pod's narrower one: replaced.
	r, out = podCreate(t, reads, "spec:\n  runtimeClassName: gvisor\n  tolerations: [{key: sandbox, operator: Equal, value: x, effect: NoSchedule}]\n"+containers)
	if got := at(t, out, "spec", "tolerations"); strings.Contains(got, `"value":"x"`) || !strings.Contains(got, `"key":"sandbox","operator":"Exists"`) {
		t.Errorf("narrower toleration kept: %s", got)
	}
	if last := r.Steps[len(r.Steps)-1]; last.Name != runtimeClass || last.Ops[len(last.Ops)-1].Op != v1alpha1.OpReplace {
		t.Errorf("a merge that drops a toleration replaces the list: %+v", last)
	}
	for _, c := range []struct{ name, spec, denied string }{
		{"missing", "  runtimeClassName: nosuch\n", `pods "p" is forbidden: pod rejected: RuntimeClass "nosuch" not found`},
		{"another overhead", "  runtimeClassName: gvisor\n  overhead: {cpu: 1}\n", `pods "p" is forbidden: pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead`},
		{"another node", "  runtimeClassName: gvisor\n  nodeSelector: {sandbox: 'false'}\n", `pods "p" is forbidden: conflict: runtimeClass.scheduling.nodeSelector[sandbox] = true; pod.spec.nodeSelector[sandbox] = false`},
		{"overhead without class", "  overhead: {cpu: 250m}\n", `pods "p" is forbidden: pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead`},
	} {
		reads := &PodReads{ServiceAccount: defaultSA(t)}
		if !strings.Contains(c.spec, "nosuch") {
			reads.RuntimeClass = rc
		}
		if r, _ := podCreate(t, reads, "spec:\n"+c.spec+containers); r.Denied != c.denied {
			t.Errorf("%s: denied %q\nwant %q", c.name, r.Denied, c.denied)
		}
	}
	// The same overhead, written otherwise, is the class's.
	if r, _ := podCreate(t, reads, "spec:\n  runtimeClassName: gvisor\n  overhead: {cpu: '0.25'}\n"+containers); r.Denied != "" {
		t.Errorf("the same overhead: %q", r.Denied)
	}
}

// LimitRanger: the Container defaults filled into the containers that
// lack them (requests defaulted from limits first), the annotation as the
// plugin writes it; min, max and ratio checked on what the plugins leave,
// with the server's words.
func TestLimitRangerPlugin(t *testing.T) {
	lr := obj(t, `apiVersion: v1
kind: LimitRange
metadata: {name: limits, namespace: ns}
spec:
  limits:
  - type: Container
    default: {cpu: 500m, memory: 256Mi}
    defaultRequest: {cpu: 100m, memory: 256Mi}
    max: {cpu: "1"}
    maxLimitRequestRatio: {memory: "2"}
  - type: Pod
    max: {memory: 1Gi}
`)
	reads := &PodReads{ServiceAccount: defaultSA(t), LimitRanges: []*unstructured.Unstructured{lr}}
	spec := "spec:\n  automountServiceAccountToken: false\n  initContainers: [{name: i, image: busybox, resources: {limits: {memory: 300Mi}}}]\n  containers: [{name: c, image: nginx}]\n"
	r, out := podCreate(t, reads, spec)
	if !r.Exact || r.Denied != "" {
		t.Fatalf("exact %v, denied %q", r.Exact, r.Denied)
	}
	if got := at(t, out, "spec", "containers", pathlang.ItemSegment("name", "c"), "resources"); got != `{"limits":{"cpu":"500m","memory":"256Mi"},"requests":{"cpu":"100m","memory":"256Mi"}}` {
		t.Errorf("container c: %s", got)
	}
	// The init container's memory request is its limit (decoding's
	// default), not the LimitRange's.
	if got := at(t, out, "spec", "initContainers", pathlang.ItemSegment("name", "i"), "resources"); got != `{"limits":{"cpu":"500m","memory":"300Mi"},"requests":{"cpu":"100m"}}` {
		t.Errorf("init container i: %s", got)
	}
	want := `"LimitRanger plugin set: cpu, memory request for container c; cpu, memory limit for container c; cpu request for init container i; cpu limit for init container i"`
	if got := at(t, out, "metadata", "annotations", "kubernetes.io/limit-ranger"); got != want {
		t.Errorf("annotation\n got %s\nwant %s", got, want)
	}
	for _, c := range []struct{ name, containers, denied string }{
		{"max", "[{name: c, image: nginx, resources: {limits: {cpu: '2'}}}]", `pods "p" is forbidden: maximum cpu usage per Container is 1, but limit is 2`},
		{"ratio", "[{name: c, image: nginx, resources: {requests: {memory: 100Mi}, limits: {memory: 300Mi}}}]", `pods "p" is forbidden: memory max limit to request ratio per Container is 2, but provided ratio is 3.000000`},
		{"pod max", "[{name: c, image: nginx}, {name: d, image: nginx}, {name: e, image: nginx}, {name: f, image: nginx}, {name: g, image: nginx}]", `pods "p" is forbidden: maximum memory usage per Pod is 1Gi, but limit is 1280Mi`},
		{"two at once", "[{name: c, image: nginx, resources: {limits: {cpu: '2', memory: 600Mi}, requests: {memory: 100Mi}}}]", `pods "p" is forbidden: [maximum cpu usage per Container is 1, but limit is 2, memory max limit to request ratio per Container is 2, but provided ratio is 6.000000]`},
	} {
		r, _ := podCreate(t, reads, "spec:\n  automountServiceAccountToken: false\n  containers: "+c.containers+"\n")
		if r.Denied != c.denied || !strings.HasSuffix(steps(r), "BuiltinPlugin DefaultTolerationSeconds mutates; BuiltinPlugin LimitRanger denies") {
			t.Errorf("%s: denied %q\nwant %q\n(%s)", c.name, r.Denied, c.denied, steps(r))
		}
	}
	// Two LimitRanges that both set defaults: the order is the
	// apiserver's, not known here.
	other := obj(t, "apiVersion: v1\nkind: LimitRange\nmetadata: {name: other, namespace: ns}\nspec:\n  limits: [{type: Container, defaultRequest: {ephemeral-storage: 1Gi}}]\n")
	r, _ = podCreate(t, &PodReads{ServiceAccount: defaultSA(t), LimitRanges: []*unstructured.Unstructured{lr, other}}, spec)
	if r.Exact || r.Steps[0].Effect != v1alpha1.EffectMayMutate {
		t.Errorf("two LimitRanges: exact %v, %s", r.Exact, steps(r))
	}
}

// A Pod's create without reads (no cluster source) is not modelled: one
// step says so, and the prediction is not exact.
func TestPodWithoutReads(t *testing.T) {
	pod := obj(t, "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ns}\nspec: {containers: [{name: c, image: nginx}]}\n")
	r := Evaluate(&Config{}, Request{Object: pod, Resource: podsGVR, Namespaced: true})
	if r.Exact || len(r.Steps) != 1 || r.Steps[0].Effect != v1alpha1.EffectMayMutate {
		t.Errorf("exact %v, %s", r.Exact, steps(r))
	}
}

// The names the server generates are adopted from its object before the
// two are compared; what the prediction holds already is left alone.
func TestAdoptGeneratedNames(t *testing.T) {
	r, predicted := podCreate(t, &PodReads{ServiceAccount: defaultSA(t)}, "spec:\n  volumes: [{name: data, emptyDir: {}}]\n  containers: [{name: c, image: nginx}]\n")
	server := predicted.DeepCopy()
	vols, _, _ := unstructured.NestedSlice(server.Object, "spec", "volumes")
	vols[1].(map[string]any)["name"] = "kube-api-access-x7k2p"
	_ = unstructured.SetNestedSlice(server.Object, vols, "spec", "volumes")
	mounts, _ := lookup(server.Object, []string{"spec", "containers", pathlang.ItemSegment("name", "c"), "volumeMounts"})
	mounts.([]any)[0].(map[string]any)["name"] = "kube-api-access-x7k2p"
	AdoptGeneratedNames(r, predicted, server)
	if diff := cmp.Diff(server.Object, predicted.Object); diff != "" {
		t.Errorf("(-server +predicted):\n%s", diff)
	}
}
