package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
)

type handoverReport struct {
	Kind   string `json:"kind"`
	Mode   string `json:"mode"`
	Status string `json:"status"`
	Steps  []struct {
		Name   string `json:"name"`
		Status string `json:"status"`
	} `json:"steps"`
	After []struct {
		Path   string  `json:"path"`
		Value  any     `json:"value"`
		Owners []owner `json:"owners"`
	} `json:"after"`
	Orphaned     []string `json:"orphaned"`
	AppliersOnly []string `json:"appliersOnly"`
	Warnings     []string `json:"warnings"`
}

func handoverJSON(t *testing.T, want int, args ...string) handoverReport {
	t.Helper()
	res := mustSSA(t, want, append(args, "-o", "json")...)
	var r handoverReport
	if err := json.Unmarshal([]byte(res.stdout), &r); err != nil || r.Kind != "HandoverReport" {
		t.Fatalf("not a handover report: %v\n%s\n%s", err, res.stdout, res.stderr)
	}
	return r
}

func stepNames(r handoverReport) string {
	var out []string
	for _, s := range r.Steps {
		out = append(out, s.Name+":"+s.Status)
	}
	return strings.Join(out, " ")
}

const hpaDeployment = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: nginx, image: nginx, resources: {requests: {cpu: 10m}}}]
`

// TestHandoverToHPA is the documented recipe end to end, with the real
// deployment and HPA controllers: the replica count is watched for the
// whole sequence and must never drop or be reset.
func TestHandoverToHPA(t *testing.T) {
	ns := namespace(t)
	d := apply(t, ns, "kubectl", hpaDeployment, false)

	// Watch every version of the Deployment while the handover runs.
	gvr := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	w, err := env.dynamic.Resource(gvr).Namespace(ns).Watch(context.Background(), metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("metadata.name", "web").String(), ResourceVersion: d.GetResourceVersion(),
	})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var seen []int64
	watchDone := make(chan struct{})
	go func() {
		defer close(watchDone)
		for ev := range w.ResultChan() {
			if ev.Type != watch.Modified && ev.Type != watch.Added {
				continue
			}
			u := ev.Object.(*unstructured.Unstructured)
			r, found, _ := unstructured.NestedInt64(u.Object, "spec", "replicas")
			if !found {
				r = -1
			}
			mu.Lock()
			seen = append(seen, r)
			mu.Unlock()
		}
	}()

	cmd := exec.Command("kubectl-ssa", "handover", "-n", ns, "deployment/web", "--field", ".spec.replicas",
		"--from", "kubectl", "--to", "kube-controller-manager", "--wait", "--timeout", "90s", "-o", "json")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The HPA arrives once the handover holds the field and kubectl has let
	// go of it: an HPA that scaled in between would take the field from
	// kubectl itself, and the release step would rightly not be needed.
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		u := get(t, d)
		if hasEntry(u, "kubectl-ssa-handover") && !owns(u.GetManagedFields(), "kubectl", "replicas") {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	apply(t, ns, "kubectl", `
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: web}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 3
  maxReplicas: 5
  metrics: [{type: Resource, resource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}}]
`, false)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("handover: %v\n%s\n%s", err, out.String(), errb.String())
	}
	var r handoverReport
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if r.Status != "completed" || r.Mode != "controller" {
		t.Errorf("status %q mode %q steps %s", r.Status, r.Mode, stepNames(r))
	}
	if got := stepNames(r); !strings.HasPrefix(got, "hold:done release:done wait:done") {
		t.Errorf("steps %s", got)
	}

	rep := whoOwnsJSON(t, "-n", ns, "deploy/web")
	assertOwners(t, rep, ".spec.replicas", "kube-controller-manager/Update/scale")
	if hasManager(rep, "kubectl-ssa-handover") {
		t.Errorf("the temporary manager is still there: %+v", rep.Managers)
	}

	// The user's manifest without replicas now applies cleanly and the
	// count stays where the HPA put it.
	noReplicas := strings.Replace(hpaDeployment, "  replicas: 1\n", "", 1)
	if res, _ := explain(t, ns, applyCase{manifest: noReplicas, manager: "kubectl"}); len(res.Conflicts) != 0 || len(res.Removed) != 0 {
		t.Errorf("after the handover: conflicts %+v removed %v", res.Conflicts, res.Removed)
	}
	apply(t, ns, "kubectl", noReplicas, false)
	time.Sleep(3 * time.Second) // two HPA sync periods

	w.Stop()
	<-watchDone
	mu.Lock()
	defer mu.Unlock()
	if len(seen) == 0 {
		t.Fatal("the watch saw nothing")
	}
	for i, v := range seen {
		if v < 1 {
			t.Fatalf("replicas dropped to %d at version %d: %v", v, i, seen)
		}
		if i > 0 && v < seen[i-1] {
			t.Fatalf("replicas were reset from %d to %d: %v", seen[i-1], v, seen)
		}
	}
	if final := seen[len(seen)-1]; final != 3 {
		t.Errorf("final replicas %d, want 3 (the HPA minimum): %v", final, seen)
	}

	// Running it again does nothing.
	before := get(t, d).GetResourceVersion()
	again := handoverJSON(t, 0, "handover", "-n", ns, "deployment/web", "--field", ".spec.replicas", "--from", "kubectl", "--to", "kube-controller-manager", "--wait")
	if again.Status != "already-complete" || len(again.Steps) != 0 {
		t.Errorf("re-run: %s %s", again.Status, stepNames(again))
	}
	if after := get(t, d).GetResourceVersion(); after != before {
		t.Errorf("the re-run wrote: resourceVersion %s -> %s", before, after)
	}
}

func hasEntry(u *unstructured.Unstructured, manager string) bool {
	for _, e := range u.GetManagedFields() {
		if e.Manager == manager {
			return true
		}
	}
	return false
}

const appliersCM = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","labels":{"app.kubernetes.io/name":"c"}},"data":{"a":"1","b":"2"}}`

func TestHandoverBetweenAppliers(t *testing.T) {
	ns := namespace(t)
	cm := apply(t, ns, "ci-deploy", appliersCM, false)
	apply(t, ns, "argocd-controller", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"b":"2"}}`, false)

	args := []string{"handover", "-n", ns, "cm/c", "--field", ".data.a", "--field", `.metadata.labels["app.kubernetes.io/name"]`, "--from", "ci-deploy", "--to", "argocd-controller"}
	// Dry runs write nothing.
	rv := get(t, cm).GetResourceVersion()
	plan := handoverJSON(t, 0, append(args, "--dry-run=client")...)
	if plan.Mode != "applier" || stepNames(plan) != "share:dry-run release:dry-run" {
		t.Errorf("client dry run: mode %q steps %s", plan.Mode, stepNames(plan))
	}
	handoverJSON(t, 0, append(args, "--dry-run=server")...)
	if now := get(t, cm).GetResourceVersion(); now != rv {
		t.Fatalf("a dry run wrote: %s -> %s", rv, now)
	}

	r := handoverJSON(t, 0, args...)
	if r.Status != "completed" || stepNames(r) != "share:done release:done" {
		t.Errorf("status %q steps %s", r.Status, stepNames(r))
	}
	rep := whoOwnsJSON(t, "-n", ns, "cm/c")
	assertOwners(t, rep, ".data.a", "argocd-controller/Apply")
	assertOwners(t, rep, ".metadata.labels.app.kubernetes.io/name", "argocd-controller/Apply")
	assertOwners(t, rep, ".data.b", "argocd-controller/Apply", "ci-deploy/Apply")
	if v := rep.value(".data.a"); v != "1" {
		t.Errorf("value changed: %v", v)
	}
	// The old manager's manifest without the field no longer removes it.
	apply(t, ns, "ci-deploy", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"b":"2"}}`, false)
	if v, _, _ := unstructured.NestedString(get(t, cm).Object, "data", "a"); v != "1" {
		t.Errorf(".data.a = %q after ci-deploy dropped it, want 1", v)
	}
	// Idempotent.
	again := handoverJSON(t, 0, args...)
	if again.Status != "already-complete" {
		t.Errorf("re-run status %q", again.Status)
	}
}

func TestHandoverResumesAfterInterruption(t *testing.T) {
	ns := namespace(t)
	apply(t, ns, "ci-deploy", appliersCM, false)
	// The run was interrupted after its first step: the new manager
	// already shares the field.
	apply(t, ns, "argocd-controller", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"a":"1"}}`, false)
	r := handoverJSON(t, 0, "handover", "-n", ns, "cm/c", "--field", ".data.a", "--from", "ci-deploy", "--to", "argocd-controller")
	if stepNames(r) != "release:done" {
		t.Errorf("resumed steps %s, want only the release", stepNames(r))
	}
	assertOwners(t, whoOwnsJSON(t, "-n", ns, "cm/c"), ".data.a", "argocd-controller/Apply")
}

// busyWriter patches a counter label on obj every period until the
// returned stop is called, which returns how many writes it made; it
// starts writing before it returns, and stops at the latest when the test
// ends.
func busyWriter(t *testing.T, obj *unstructured.Unstructured, period time.Duration) (stop func() int) {
	t.Helper()
	quit := make(chan struct{})
	done := make(chan int)
	go func() {
		n := 0
		for {
			select {
			case <-quit:
				done <- n
				return
			default:
			}
			if err := tryPatch(obj, "busy-writer", fmt.Sprintf(`{"metadata":{"labels":{"counter":"%d"}}}`, n+1)); err != nil {
				t.Errorf("busy writer: %v", err)
				<-quit
				done <- n
				return
			}
			n++
			time.Sleep(period)
		}
	}()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if get(t, obj).GetLabels()["counter"] != "" {
			break // the writer is going
		}
	}
	var once sync.Once
	n := 0
	stop = func() int {
		once.Do(func() {
			close(quit)
			n = <-done
		})
		return n
	}
	t.Cleanup(func() { stop() })
	return stop
}

func TestHandoverConcurrentWriter(t *testing.T) {
	ns := namespace(t)
	cm := apply(t, ns, "ci-deploy", appliersCM, false)
	stop := busyWriter(t, cm, 15*time.Millisecond)
	r := handoverJSON(t, 0, "handover", "-n", ns, "cm/c", "--field", ".data.a", "--from", "ci-deploy", "--to", "argocd-controller")
	n := stop()
	if r.Status != "completed" {
		t.Errorf("status %q", r.Status)
	}
	final := get(t, cm)
	if got := final.GetLabels()["counter"]; got != fmt.Sprint(n) {
		t.Errorf("the concurrent writer's last label is %q, want %d: a write was lost", got, n)
	}
	rep := whoOwnsJSON(t, "-n", ns, "cm/c")
	assertOwners(t, rep, ".data.a", "argocd-controller/Apply")
	assertOwners(t, rep, ".metadata.labels.counter", "busy-writer/Update")
}

// TestHandoverDryRunConcurrentWriter: a server dry run planned from an
// object another writer changes meanwhile gets a 409; it reads the object
// again and dry-runs again, as the real run does, and stores nothing.
func TestHandoverDryRunConcurrentWriter(t *testing.T) {
	ns := namespace(t)
	cm := apply(t, ns, "ci-deploy", appliersCM, false)
	stop := busyWriter(t, cm, 25*time.Millisecond)
	// (A writer every 25 ms, as a busy controller: a dry run without the
	// retry met a 409 in most of eight runs.)
	for i := 0; i < 8; i++ {
		r := handoverJSON(t, 0, "handover", "-n", ns, "cm/c", "--field", ".data.a", "--from", "ci-deploy", "--to", "argocd-controller", "--dry-run=server")
		if r.Status != "planned" || stepNames(r) != "share:dry-run release:dry-run" {
			t.Errorf("run %d: status %q steps %s, want planned with both steps dry-run", i, r.Status, stepNames(r))
		}
	}
	stop()
	rep := whoOwnsJSON(t, "-n", ns, "cm/c")
	assertOwners(t, rep, ".data.a", "ci-deploy/Apply")
}

func TestHandoverRelease(t *testing.T) {
	ns := namespace(t)
	cm := csaApply(t, ns, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"x":"1","y":"2","z":"3"}}`)
	apply(t, ns, "team", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"x":"1","y":"2"}}`, false)

	r := handoverJSON(t, 0, "handover", "release", "-n", ns, "cm/c", "--from", "kubectl-client-side-apply", "--field", ".data.y", "--field", ".data.z")
	if strings.Join(r.Orphaned, " ") != ".data.z" || strings.Join(r.AppliersOnly, " ") != ".data.y" {
		t.Errorf("orphaned %v appliersOnly %v", r.Orphaned, r.AppliersOnly)
	}
	rep := whoOwnsJSON(t, "-n", ns, "cm/c")
	assertOwners(t, rep, ".data.y", "team/Apply")
	if rep.owners(".data.z") != nil || rep.value(".data.x") != "1" {
		t.Errorf("after release: z owners %v", rep.owners(".data.z"))
	}
	// Now the applier's manifest without y really removes it.
	apply(t, ns, "team", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"x":"1"}}`, false)
	if _, found, _ := unstructured.NestedString(get(t, cm).Object, "data", "y"); found {
		t.Errorf(".data.y is still there")
	}
	// --all drops the whole entry.
	handoverJSON(t, 0, "handover", "release", "-n", ns, "cm/c", "--from", "kubectl-client-side-apply", "--all")
	if hasEntry(get(t, cm), "kubectl-client-side-apply") {
		t.Errorf("the kubectl-client-side-apply entry is still there")
	}
}

func TestHandoverErrors(t *testing.T) {
	ns := namespace(t)
	cm := apply(t, ns, "ci-deploy", appliersCM, false)
	apply(t, ns, "other", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"o":"x"}}`, false)
	configMapReader(t, ns, "reader")
	rv := get(t, cm).GetResourceVersion()
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"not owned by source", []string{"--field", ".data.o", "--from", "ci-deploy", "--to", "argocd"}, `"ci-deploy" does not own .data.o \(owners: "other"\)`},
		{"no such path", []string{"--field", ".data.nope", "--from", "ci-deploy", "--to", "argocd"}, `.data.nope is not set on the object`},
		{"no such manager", []string{"--field", ".data.a", "--from", "ghost", "--to", "argocd"}, `there is no manager "ghost"`},
		{"forbidden write", []string{"--field", ".data.a", "--from", "ci-deploy", "--to", "argocd", "--as", "reader"}, `(?i)forbidden`},
		{"missing --to", []string{"--field", ".data.a", "--from", "ci-deploy"}, `--to`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := ssa(t, append([]string{"handover", "-n", ns, "cm/c"}, c.args...)...)
			if r.code == 0 {
				t.Fatalf("exit 0:\n%s", r.stdout)
			}
			wantLine(t, r.stderr, c.want)
			if strings.Contains(r.stderr, "panic") {
				t.Fatal(r.stderr)
			}
		})
	}
	if now := get(t, cm).GetResourceVersion(); now != rv {
		t.Errorf("a failed handover wrote: %s -> %s", rv, now)
	}
}

// An empty shell variable in --field ("--field $F"), a blank path or the
// root path names the whole object: refused before anything is read,
// handover and release alike, and nothing is written; every field of a
// manager is --all's, on handover release.
func TestHandoverRefusesWholeObject(t *testing.T) {
	ns := namespace(t)
	cm := apply(t, ns, "ci-deploy", appliersCM, false)
	rv := get(t, cm).GetResourceVersion()
	for _, f := range []string{"", " ", ".", "{}"} {
		for _, args := range [][]string{
			{"handover", "-n", ns, "cm/c", "--field", f, "--from", "ci-deploy", "--to", "argocd"},
			{"handover", "release", "-n", ns, "cm/c", "--field", f, "--from", "ci-deploy"},
			{"handover", "release", "-n", ns, "cm/c", "--field", ".data.a", "--field", f, "--from", "ci-deploy", "--dry-run=server"},
		} {
			r := mustSSA(t, 2, args...)
			wantLine(t, r.stderr, `^error: --field ".*" (is empty|names the whole object)`)
			wantLine(t, r.stderr, `--all`)
			if strings.Contains(r.stdout, "completed") {
				t.Errorf("%q: reported as done:\n%s", args, r.stdout)
			}
		}
	}
	if now := get(t, cm); now.GetResourceVersion() != rv || !hasEntry(now, "ci-deploy") {
		t.Errorf("a refused handover wrote: %s -> %s", rv, now.GetResourceVersion())
	}
}

// A controller writes a field only when its value must change: handed
// over while already at its target, the field stays held, safely.
func TestHandoverHeldUntilControllerWrites(t *testing.T) {
	ns := namespace(t)
	d := apply(t, ns, "kubectl", strings.Replace(hpaDeployment, "replicas: 1", "replicas: 3", 1), false)
	res := mustSSA(t, 1, "handover", "-n", ns, "deploy/web", "--field", ".spec.replicas", "--from", "kubectl", "--to", "kube-controller-manager", "--wait", "--timeout", "3s", "-o", "json")
	var r handoverReport
	if err := json.Unmarshal([]byte(res.stdout), &r); err != nil || r.Status != "held" {
		t.Fatalf("status %q: %v\n%s", r.Status, err, res.stdout)
	}
	rep := whoOwnsJSON(t, "-n", ns, "deploy/web")
	assertOwners(t, rep, ".spec.replicas", "kubectl-ssa-handover/Apply")
	if v, _, _ := unstructured.NestedInt64(get(t, d).Object, "spec", "replicas"); v != 3 {
		t.Errorf("replicas %d", v)
	}
	// Without --wait the same state is a success.
	again := handoverJSON(t, 0, "handover", "-n", ns, "deploy/web", "--field", ".spec.replicas", "--from", "kubectl", "--to", "kube-controller-manager")
	if again.Status != "held" || len(again.Steps) != 0 {
		t.Errorf("re-run: %s %s", again.Status, stepNames(again))
	}
}

// TestHandoverSubtree: handing over a map hands over what the source owns
// below it; no field of it is left without an owner.
func TestHandoverSubtree(t *testing.T) {
	ns := namespace(t)
	d := apply(t, ns, "ci-deploy", `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"w"},"spec":{"selector":{"matchLabels":{"app":"w"}},"template":{"metadata":{"labels":{"app":"w"}},"spec":{"containers":[{"name":"app","image":"nginx","resources":{"requests":{"cpu":"100m","memory":"64Mi"}}}]}}}}`, false)
	apply(t, ns, "vpa", `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"w"},"spec":{"template":{"spec":{"containers":[{"name":"app","image":"nginx"}]}}}}`, false)
	r := handoverJSON(t, 0, "handover", "-n", ns, "deploy/w", "--field", `.spec.template.spec.containers[name="app"].resources`, "--from", "ci-deploy", "--to", "vpa")
	if r.Status != "completed" {
		t.Fatalf("status %q", r.Status)
	}
	rep := whoOwnsJSON(t, "-n", ns, "deploy/w")
	for _, p := range []string{`.spec.template.spec.containers[name="app"].resources.requests.cpu`, `.spec.template.spec.containers[name="app"].resources.requests.memory`} {
		assertOwners(t, rep, p, "vpa/Apply")
	}
	// ci-deploy's manifest without resources no longer removes them.
	apply(t, ns, "ci-deploy", `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"w"},"spec":{"selector":{"matchLabels":{"app":"w"}},"template":{"metadata":{"labels":{"app":"w"}},"spec":{"containers":[{"name":"app","image":"nginx"}]}}}}`, false)
	cs, _, _ := unstructured.NestedSlice(get(t, d).Object, "spec", "template", "spec", "containers")
	cpu, _, _ := unstructured.NestedString(cs[0].(map[string]any), "resources", "requests", "cpu")
	if cpu != "100m" {
		t.Errorf("requests.cpu = %q after ci-deploy dropped resources, want 100m", cpu)
	}
}

// TestHandoverWarnsWithoutAutoscaler: handing .spec.replicas to
// kube-controller-manager when no HPA targets the object says that nothing
// will write it; with one, it does not.
func TestHandoverWarnsWithoutAutoscaler(t *testing.T) {
	ns := namespace(t)
	apply(t, ns, "kubectl", `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"w"},"spec":{"replicas":3,"selector":{"matchLabels":{"app":"w"}},"template":{"metadata":{"labels":{"app":"w"}},"spec":{"containers":[{"name":"app","image":"nginx"}]}}}}`, false)
	args := []string{"handover", "-n", ns, "deploy/w", "--field", ".spec.replicas", "--from", "kubectl", "--to", "kube-controller-manager", "--dry-run=client"}
	r := handoverJSON(t, 0, args...)
	if len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], "no HorizontalPodAutoscaler in namespace "+ns+" targets Deployment/"+ns+"/w") {
		t.Errorf("warnings %q", r.Warnings)
	}
	apply(t, ns, "kubectl-autoscale", `{"apiVersion":"autoscaling/v1","kind":"HorizontalPodAutoscaler","metadata":{"name":"w"},"spec":{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"w"},"maxReplicas":5}}`, false)
	if r := handoverJSON(t, 0, args...); len(r.Warnings) != 0 {
		t.Errorf("with an HPA: warnings %q", r.Warnings)
	}
}

// TestHandoverToHPAInsideItsRange: the autoscaler writes /scale only when
// it wants another value, so with replicas inside its range it may never
// write them. Once the applier let go and nothing else can reset the field,
// the handover is done (exit 0, handed-over), --wait or not; the suggested
// --wait command also takes --dry-run.
func TestHandoverToHPAInsideItsRange(t *testing.T) {
	ns := namespace(t)
	d := apply(t, ns, "kubectl", strings.Replace(hpaDeployment, "replicas: 1", "replicas: 3", 1), false)
	apply(t, ns, "kubectl-autoscale", `{"apiVersion":"autoscaling/v1","kind":"HorizontalPodAutoscaler","metadata":{"name":"web"},
		"spec":{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"web"},"minReplicas":2,"maxReplicas":5,"targetCPUUtilizationPercentage":80}}`, false)
	args := []string{"handover", "-n", ns, "deploy/web", "--field", ".spec.replicas", "--from", "kubectl", "--to", "kube-controller-manager", "--wait", "--timeout", "4s"}
	if r := handoverJSON(t, 0, append(args, "--dry-run=server")...); r.Status != "planned" || stepNames(r) != "hold:dry-run release:dry-run wait:skipped" {
		t.Errorf("--wait --dry-run=server: status %q steps %s", r.Status, stepNames(r))
	}
	r := handoverJSON(t, 0, args...)
	if r.Status != "handed-over" {
		t.Fatalf("status %q steps %s, want handed-over", r.Status, stepNames(r))
	}
	text := mustSSA(t, 0, append(args, "--color", "never")...)
	if !strings.Contains(text.stdout, "Result: handed-over: done: no applier owns the fields") {
		t.Errorf("the narrative does not say it is done:\n%s", text.stdout)
	}
	// The temporary manager is no drift for audit: adopting its field
	// would give replicas back to the applier.
	rep := auditJSON(t, 0, "-n", ns, "deployments", "--expect-manager", "kubectl")
	if len(rep.Findings) != 1 || rep.Findings[0].Code != "handover-held" || rep.Findings[0].Fix != "" {
		t.Errorf("audit after the handover: %v", shorts(rep))
	}
	// The applier's manifest without replicas leaves them where they are.
	apply(t, ns, "kubectl", strings.Replace(hpaDeployment, "  replicas: 1\n", "", 1), false)
	if v, _, _ := unstructured.NestedInt64(get(t, d).Object, "spec", "replicas"); v != 3 {
		t.Errorf("replicas %d after the applier dropped them, want 3", v)
	}
}
