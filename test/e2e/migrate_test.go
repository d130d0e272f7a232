package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

type migrationReport struct {
	Kind      string `json:"kind"`
	BackupDir string `json:"backupDir"`
	Summary   struct {
		Scanned, Migrated, Unchanged, Skipped, Failed int
	} `json:"summary"`
	Objects []struct {
		Object struct{ Kind, Namespace, Name string } `json:"object"`
		Result string                                 `json:"result"`
		Reason string                                 `json:"reason"`
	} `json:"objects"`
}

func migrateJSON(t *testing.T, want int, args ...string) migrationReport {
	t.Helper()
	res := mustSSA(t, want, append(args, "-o", "json")...)
	var r migrationReport
	if err := json.Unmarshal([]byte(res.stdout), &r); err != nil || r.Kind != "MigrationReport" {
		t.Fatalf("not a migration report: %v\n%s\n%s", err, res.stdout, res.stderr)
	}
	return r
}

func csaEntries(u *unstructured.Unstructured) []string {
	var out []string
	for _, e := range u.GetManagedFields() {
		if e.Manager == "kubectl-client-side-apply" {
			out = append(out, e.Manager+"@"+e.APIVersion)
		}
	}
	return out
}

const csaDeployment = `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: app
  labels: {tier: web, team: pay}
spec:
  replicas: 2
  selector: {matchLabels: {app: app}}
  template:
    metadata: {labels: {app: app}}
    spec:
      containers:
      - {name: main, image: "nginx:1", args: [serve]}
      - {name: side, image: "busybox:1"}
`

const csaConfigMap = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cfg"},"data":{"a":"1","b":"2"}}`

const csaWidget = `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"replicas":1,"endpoints":[{"host":"h","port":1,"weight":1},{"host":"h","port":2,"weight":2}],"tags":["x"]}}`

func TestMigrateClientSideApply(t *testing.T) {
	createCRD(t)
	ns := namespace(t)
	d := csaApply(t, ns, csaDeployment)
	cm := csaApply(t, ns, csaConfigMap)
	w := csaApply(t, ns, csaWidget)
	// Edits after the client-side apply: kubectl scale, a kubectl edit,
	// and the deployment controller's own status writes.
	patch(t, d, "kubectl", `{"spec":{"replicas":3}}`, "scale")
	patch(t, d, "kubectl-edit", `{"metadata":{"annotations":{"note":"edited"}}}`)
	before := map[string]*unstructured.Unstructured{"d": get(t, d), "cm": get(t, cm), "w": get(t, w)}

	// --check finds them and exits 1; a client dry run writes nothing.
	chk := migrateJSON(t, 1, "migrate", "-n", ns, "deploy,cm,widgets", "--check")
	if chk.Summary.Migrated != 3 {
		t.Errorf("--check: %+v", chk.Summary)
	}
	dry := ssa(t, "migrate", "-n", ns, "deploy,cm,widgets", "--dry-run=client", "--color", "never")
	if dry.code != 0 || !strings.Contains(dry.stdout, "would migrate  Deployment/"+ns+"/app") || !strings.Contains(dry.stdout, `- "kubectl-client-side-apply" (Update, apps/v1): entry removed`) || !strings.Contains(dry.stdout, `+   .metadata.labels.team`) {
		t.Errorf("client dry run: %d\n%s%s", dry.code, dry.stdout, dry.stderr)
	}
	migrateJSON(t, 0, "migrate", "-n", ns, "deploy,cm,widgets", "--dry-run=server")
	for k, b := range before {
		// (The deployment controller keeps writing status: compare ownership.)
		if now := get(t, b); len(csaEntries(now)) != 1 || normalizeExcept(now, "kube-controller-manager") != normalizeExcept(b, "kube-controller-manager") {
			t.Fatalf("a dry run wrote %s", k)
		}
	}

	backup := filepath.Join(t.TempDir(), "backup")
	r := migrateJSON(t, 0, "migrate", "-n", ns, "deploy,cm,widgets", "--verify", "--backup-dir", backup)
	if r.Summary.Migrated != 3 || r.Summary.Failed != 0 {
		t.Fatalf("migrate: %+v %+v", r.Summary, r.Objects)
	}
	for k, b := range before {
		now := get(t, b)
		if left := csaEntries(now); len(left) > 0 {
			t.Errorf("%s still has %v", k, left)
		}
		// No value changed.
		strip := func(u *unstructured.Unstructured) string {
			o := u.DeepCopy().Object
			unstructured.RemoveNestedField(o, "metadata", "managedFields")
			unstructured.RemoveNestedField(o, "metadata", "resourceVersion")
			unstructured.RemoveNestedField(o, "status")
			// The deployment controller's own write, which may land
			// between the two reads.
			unstructured.RemoveNestedField(o, "metadata", "annotations", "deployment.kubernetes.io/revision")
			bb, _ := json.Marshal(o)
			return string(bb)
		}
		if strip(b) != strip(now) {
			t.Errorf("%s changed:\nbefore %s\nafter  %s", k, strip(b), strip(now))
		}
	}
	rep := whoOwnsJSON(t, "-n", ns, "deploy/app")
	assertOwners(t, rep, ".metadata.labels.team", "kubectl/Apply")
	assertOwners(t, rep, `.spec.template.spec.containers[name="main"].args`, "kubectl/Apply")
	assertOwners(t, rep, ".spec.replicas", "kubectl/Update/scale")
	assertOwners(t, rep, ".metadata.annotations.note", "kubectl-edit/Update")

	// A second run finds nothing to do.
	again := migrateJSON(t, 0, "migrate", "-n", ns, "deploy,cm,widgets")
	if again.Summary.Migrated != 0 || again.Summary.Unchanged != 3 {
		t.Errorf("second run: %+v", again.Summary)
	}

	// The proof that ownership moved: server-side applies by "kubectl"
	// that drop a field really remove it; an unchanged manifest applies
	// without conflict.
	// (The manifest follows the kubectl scale to 3: replicas: 2 would
	// conflict with it, as server-side apply should.)
	apply(t, ns, "kubectl", strings.Replace(strings.Replace(csaDeployment, ", team: pay", "", 1), "replicas: 2", "replicas: 3", 1), false)
	if _, ok := get(t, d).GetLabels()["team"]; ok {
		t.Errorf("the dropped label team is still on the Deployment")
	}
	apply(t, ns, "kubectl", csaConfigMap, false)
	apply(t, ns, "kubectl", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cfg"},"data":{"a":"1"}}`, false)
	if _, found, _ := unstructured.NestedString(get(t, cm).Object, "data", "b"); found {
		t.Errorf(".data.b is still in the ConfigMap")
	}
	apply(t, ns, "kubectl", `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"replicas":1,"endpoints":[{"host":"h","port":1,"weight":1}],"tags":["x"]}}`, false)
	if eps, _, _ := unstructured.NestedSlice(get(t, w).Object, "spec", "endpoints"); len(eps) != 1 {
		t.Errorf("the dropped endpoint is still there: %v", eps)
	}

	// Undo refuses objects written since; --force restores them.
	u := migrateJSON(t, 3, "migrate", "undo", "--backup-dir", backup)
	if u.Summary.Skipped != 3 {
		t.Errorf("undo after later writes: %+v", u.Summary)
	}
}

func TestMigrateUndoAndRemoveLastApplied(t *testing.T) {
	ns := namespace(t)
	cm := csaApply(t, ns, csaConfigMap)
	orig := get(t, cm)
	backup := filepath.Join(t.TempDir(), "b")
	migrateJSON(t, 0, "migrate", "-n", ns, "cm/cfg", "--remove-last-applied", "--backup-dir", backup)
	now := get(t, cm)
	if _, ok := now.GetAnnotations()["kubectl.kubernetes.io/last-applied-configuration"]; ok {
		t.Errorf("--remove-last-applied left the annotation")
	}
	files, _ := filepath.Glob(filepath.Join(backup, "core.v1.configmaps", ns, "cfg.json"))
	if len(files) != 1 {
		t.Fatalf("no backup file in %s", backup)
	}
	u := migrateJSON(t, 0, "migrate", "undo", "--backup-dir", backup)
	if u.Summary.Migrated != 1 {
		t.Fatalf("undo: %+v %+v", u.Summary, u.Objects)
	}
	restored := get(t, cm)
	if restored.GetAnnotations()["kubectl.kubernetes.io/last-applied-configuration"] != orig.GetAnnotations()["kubectl.kubernetes.io/last-applied-configuration"] {
		t.Errorf("undo did not restore the annotation")
	}
	if normalize(restored.GetManagedFields()) != normalize(orig.GetManagedFields()) {
		t.Errorf("undo: managedFields\n%s\nwant\n%s", normalize(restored.GetManagedFields()), normalize(orig.GetManagedFields()))
	}
}

func TestMigrateOtherAPIVersion(t *testing.T) {
	createExtraCRDs(t)
	ns := namespace(t)
	// Client-side applied at v1; migrated as read at v2.
	g := csaApply(t, ns, `{"apiVersion":"example.com/v1","kind":"Gadget","metadata":{"name":"g"},"spec":{"size":"s","color":"red"}}`)
	file := filepath.Join(t.TempDir(), "g.yaml")
	writeFile(t, file, fmt.Sprintf(`{"apiVersion":"example.com/v2","kind":"Gadget","metadata":{"name":"g","namespace":"%s"}}`, ns))
	r := migrateJSON(t, 0, "migrate", "-f", file)
	if r.Summary.Migrated != 1 {
		t.Fatalf("%+v %+v", r.Summary, r.Objects)
	}
	after := get(t, g)
	if left := csaEntries(after); len(left) > 0 {
		t.Fatalf("left %v", left)
	}
	rep := whoOwnsJSON(t, "-n", ns, "gadgets.v2.example.com/g")
	assertOwners(t, rep, ".spec.color", "kubectl/Apply")
	assertOwners(t, rep, ".spec.size", "kubectl/Apply")
}

func TestMigrateRenameFoldRelease(t *testing.T) {
	ns := namespace(t)
	cm := apply(t, ns, "helm", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"h"},"data":{"a":"1"}}`, false)
	migrateJSON(t, 0, "migrate", "rename", "-n", ns, "cm/h", "--from", "helm", "--field-manager", "argocd-controller")
	rep := whoOwnsJSON(t, "-n", ns, "cm/h")
	assertOwners(t, rep, ".data.a", "argocd-controller/Apply")
	if hasManager(rep, "helm") {
		t.Errorf("helm is still there")
	}

	// before-first-apply after a reset, folded into the applier.
	patch(t, cm, "resetter", `{"metadata":{"managedFields":[{}]}}`)
	apply(t, ns, "argocd-controller", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"h"},"data":{"b":"2"}}`, false)
	rep = whoOwnsJSON(t, "-n", ns, "cm/h")
	assertOwners(t, rep, ".data.a", "before-first-apply/Update")
	migrateJSON(t, 0, "migrate", "fold", "-n", ns, "cm/h", "--field-manager", "argocd-controller")
	rep = whoOwnsJSON(t, "-n", ns, "cm/h")
	assertOwners(t, rep, ".data.a", "argocd-controller/Apply")
	// Now the applier can remove it.
	apply(t, ns, "argocd-controller", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"h"},"data":{"b":"2"}}`, false)
	if _, found, _ := unstructured.NestedString(get(t, cm).Object, "data", "a"); found {
		t.Errorf(".data.a survived the fold and apply")
	}

	migrateJSON(t, 0, "migrate", "release", "-n", ns, "cm/h", "--from", "argocd-controller")
	rep = whoOwnsJSON(t, "-n", ns, "cm/h")
	if len(rep.Managers) != 0 || rep.value(".data.b") != nil && len(rep.Fields) != 0 {
		t.Errorf("after release: %+v", rep.Managers)
	}
	if v, _, _ := unstructured.NestedString(get(t, cm).Object, "data", "b"); v != "2" {
		t.Errorf("release changed a value: %q", v)
	}
}

func TestMigrateConcurrentWriter(t *testing.T) {
	ns := namespace(t)
	var objs []*unstructured.Unstructured
	for i := 0; i < 40; i++ {
		objs = append(objs, csaApply(t, ns, fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c%02d"},"data":{"a":"1"}}`, i)))
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	last := make([]int, len(objs))
	wg.Add(1)
	go func() {
		defer wg.Done()
		for n := 1; ; n++ {
			for i, o := range objs {
				select {
				case <-stop:
					return
				default:
				}
				if err := tryPatch(o, "busy-writer", fmt.Sprintf(`{"metadata":{"labels":{"n":"%d"}}}`, n)); err != nil {
					t.Errorf("busy writer: %v", err)
					return
				}
				last[i] = n
			}
		}
	}()
	// Let the writer get going on every object before the migration runs.
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if get(t, objs[len(objs)-1]).GetLabels()["n"] != "" {
			break
		}
	}
	r := migrateJSON(t, 0, "migrate", "-n", ns, "configmaps", "--concurrency", "4", "--backup-dir", filepath.Join(t.TempDir(), "b"))
	close(stop)
	wg.Wait()
	if r.Summary.Migrated != 40 || r.Summary.Failed != 0 {
		t.Fatalf("%+v", r.Summary)
	}
	for i, o := range objs {
		now := get(t, o)
		if len(csaEntries(now)) > 0 {
			t.Errorf("%s not migrated", o.GetName())
		}
		want := fmt.Sprint(last[i])
		if last[i] == 0 {
			want = ""
		}
		if got := now.GetLabels()["n"]; got != want {
			t.Errorf("%s: the writer's last label is %q, want %d: a write was lost", o.GetName(), got, last[i])
		}
	}
}

func TestMigrateKilledAndRestarted(t *testing.T) {
	ns := namespace(t)
	const n = 150
	for i := 0; i < n; i++ {
		csaApply(t, ns, fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"k%03d"},"data":{"a":"1"}}`, i))
	}
	backup := filepath.Join(t.TempDir(), "b")
	cmd := exec.Command("kubectl-ssa", "migrate", "-n", ns, "configmaps", "--concurrency", "1", "--backup-dir", backup)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		files, _ := filepath.Glob(filepath.Join(backup, "core.v1.configmaps", ns, "*.json"))
		if len(files) >= 10 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()

	list, err := env.dynamic.Resource(cmGVR).Namespace(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	migrated := 0
	for _, item := range list.Items {
		csa, ssa := false, false
		for _, e := range item.GetManagedFields() {
			csa = csa || e.Manager == "kubectl-client-side-apply"
			ssa = ssa || (e.Manager == "kubectl" && e.Operation == metav1.ManagedFieldsOperationApply)
		}
		if csa == ssa {
			t.Errorf("%s is half-migrated: csa %v ssa %v", item.GetName(), csa, ssa)
		}
		if ssa {
			migrated++
		}
	}
	if migrated == 0 || migrated == n {
		t.Logf("killed after %d of %d objects (output: %s)", migrated, n, out.String())
	}
	r := migrateJSON(t, 0, "migrate", "-n", ns, "configmaps")
	if r.Summary.Migrated+migrated != n || r.Summary.Failed != 0 {
		t.Errorf("the restart migrated %d after %d: %+v", r.Summary.Migrated, migrated, r.Summary)
	}
	if again := migrateJSON(t, 0, "migrate", "-n", ns, "configmaps"); again.Summary.Migrated != 0 {
		t.Errorf("third run: %+v", again.Summary)
	}
}

func TestMigrateWithoutPatchRights(t *testing.T) {
	ns := namespace(t)
	cm := csaApply(t, ns, csaConfigMap)
	configMapReader(t, ns, "reader")
	rv := get(t, cm).GetResourceVersion()
	r := migrateJSON(t, 3, "migrate", "-n", ns, "configmaps", "--as", "reader", "--backup-dir", filepath.Join(t.TempDir(), "b"))
	if r.Summary.Failed != 1 || !strings.Contains(r.Objects[0].Reason, "forbidden") {
		t.Errorf("%+v", r)
	}
	if get(t, cm).GetResourceVersion() != rv {
		t.Errorf("the forbidden migration wrote")
	}
}

func normalizeExcept(u *unstructured.Unstructured, manager string) string {
	var keep []metav1.ManagedFieldsEntry
	for _, e := range u.GetManagedFields() {
		if e.Manager != manager {
			keep = append(keep, e)
		}
	}
	return normalize(keep)
}

// A last-applied configuration leaves out list-key fields the apiserver
// defaults (a port's protocol); ownership must still move item by item,
// so that a changed port replaces the old one as with a native apply.
func TestMigrateDefaultedListKeys(t *testing.T) {
	ns := namespace(t)
	manifest := `{"apiVersion":"v1","kind":"Service","metadata":{"name":"shop"},"spec":{"selector":{"app":"shop"},"ports":[{"name":"web","port":80,"targetPort":8080}]}}`
	svc := csaApply(t, ns, manifest)
	migrateJSON(t, 0, "migrate", "-n", ns, "svc/shop", "--verify", "--no-backup")
	rep := whoOwnsJSON(t, "-n", ns, "svc/shop")
	assertOwners(t, rep, `.spec.ports[port=80,protocol="TCP"].targetPort`, "kubectl/Apply")
	if rep.owners(".spec.ports") != nil {
		t.Errorf(".spec.ports is owned as a whole: %v", rep.owners(".spec.ports"))
	}
	apply(t, ns, "kubectl", strings.Replace(manifest, `"port":80`, `"port":81`, 1), false)
	ports, _, _ := unstructured.NestedSlice(get(t, svc).Object, "spec", "ports")
	if len(ports) != 1 || ports[0].(map[string]any)["port"] != int64(81) {
		t.Errorf("ports after the apply: %v (the old port must go)", ports)
	}
}

// Entries recorded at an apiVersion the server stopped serving are
// rewritten to the object's apiVersion (the apiserver would drop them, and
// the ownership they record, on the next write).
func TestMigrateAPIVersions(t *testing.T) {
	ns := namespace(t)
	crd := `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gizmos.example.com}
spec:
  group: example.com
  names: {kind: Gizmo, plural: gizmos, singular: gizmo}
  scope: Namespaced
  versions:
  - name: v1
    served: SERVED
    storage: false
    schema: &s
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, properties: {size: {type: string}}}
  - name: v2
    served: true
    storage: true
    schema: *s
`
	apply(t, "", "test-setup", strings.Replace(crd, "SERVED", "true", 1), true)
	waitEstablished(t, "gizmos.example.com")
	g := apply(t, ns, "old-tool", `{"apiVersion":"example.com/v1","kind":"Gizmo","metadata":{"name":"g"},"spec":{"size":"xl"}}`, false)
	apply(t, "", "test-setup", strings.Replace(crd, "SERVED", "false", 1), true)
	restMapper().Reset()
	time.Sleep(time.Second) // discovery catches up

	chk := ssa(t, "migrate", "apiversions", "-n", ns, "gizmos.example.com", "--check", "--color", "never")
	if chk.code != 1 || !strings.Contains(chk.stdout, `"old-tool" (Apply) was recorded at example.com/v1, which the server no longer serves`) {
		t.Fatalf("--check: exit %d\n%s%s", chk.code, chk.stdout, chk.stderr)
	}
	r := migrateJSON(t, 0, "migrate", "apiversions", "-n", ns, "gizmos.example.com", "--no-backup")
	if r.Summary.Migrated != 1 {
		t.Fatalf("%+v %+v", r.Summary, r.Objects)
	}
	g.SetAPIVersion("example.com/v2")
	for _, e := range get(t, g).GetManagedFields() {
		if e.Manager == "old-tool" && e.APIVersion != "example.com/v2" {
			t.Errorf("old-tool still at %s", e.APIVersion)
		}
	}
	rep := whoOwnsJSON(t, "-n", ns, "gizmos.example.com/g")
	assertOwners(t, rep, ".spec.size", "old-tool/Apply")
}

const csaStatefulSet = `
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  replicas: 0
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers: [{name: db, image: "busybox:1"}]
`

var revisionsGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "controllerrevisions"}

// controllerRevision makes a revision of the StatefulSet as its
// controller does (the test bed runs no StatefulSet controller): created
// by kube-controller-manager, controlled by the StatefulSet, with the
// StatefulSet's annotations, last-applied included, copied onto it.
func controllerRevision(t *testing.T, sts *unstructured.Unstructured, revision int64) *unstructured.Unstructured {
	t.Helper()
	yes := true
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "ControllerRevision",
		"data": map[string]any{"spec": map[string]any{"template": map[string]any{"$patch": "replace"}}}, "revision": revision}}
	u.SetName(fmt.Sprintf("%s-%d", sts.GetName(), revision))
	u.SetNamespace(sts.GetNamespace())
	u.SetLabels(map[string]string{"app": sts.GetName(), "controller.kubernetes.io/hash": fmt.Sprint(revision)})
	u.SetAnnotations(sts.GetAnnotations())
	u.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "StatefulSet", Name: sts.GetName(), UID: sts.GetUID(), Controller: &yes, BlockOwnerDeletion: &yes}})
	out, err := env.dynamic.Resource(revisionsGVR).Namespace(sts.GetNamespace()).Create(context.Background(), u, metav1.CreateOptions{FieldManager: "kube-controller-manager"})
	if err != nil {
		t.Fatalf("creating the ControllerRevision: %v", err)
	}
	return out
}

// The StatefulSet controller copies a client-side-applied StatefulSet's
// annotations, last-applied included, onto every ControllerRevision: that
// copy, owned by kube-controller-manager on an object the StatefulSet
// controls, is no client-side apply leftover. migrate --all-kinds leaves
// the revisions as they are (it used to take their controller's entry
// away and then fail with Go internals), and --check is green after the
// migration even as new revisions come.
func TestMigrateLeavesControllerRevisions(t *testing.T) {
	ns := namespace(t)
	kubectlApply(t, ns, csaStatefulSet)
	sts := get(t, objRef("apps/v1", "StatefulSet", ns, "db"))
	before := controllerRevision(t, sts, 1)

	chk := migrateJSON(t, 1, "migrate", "--all-kinds", "-n", ns, "--check")
	for _, o := range chk.Objects {
		if o.Object.Kind == "ControllerRevision" {
			t.Errorf("--check flags the revision: %+v", o)
		}
	}
	a := ssa(t, "audit", "-o", "json", "-n", ns)
	var rep auditReport
	if err := json.Unmarshal([]byte(a.stdout), &rep); err != nil {
		t.Fatalf("audit: %v\n%s%s", err, a.stdout, a.stderr)
	}
	for _, f := range rep.Findings {
		if f.Object.Kind == "ControllerRevision" && f.Code == "csa-leftover" {
			t.Errorf("audit flags the revision: %s", f.short())
		}
	}

	r := migrateJSON(t, 0, "migrate", "--all-kinds", "-n", ns, "--verify", "--backup-dir", filepath.Join(t.TempDir(), "backup"))
	if r.Summary.Failed != 0 || r.Summary.Migrated != 1 {
		t.Errorf("migrate: %+v %+v", r.Summary, r.Objects)
	}
	after := get(t, before)
	if normalizeExcept(after, "") != normalizeExcept(before, "") || len(after.GetManagedFields()) != len(before.GetManagedFields()) {
		t.Errorf("the revision's managedFields changed:\nbefore %v\nafter  %v", before.GetManagedFields(), after.GetManagedFields())
	}

	// A new revision, as the next deploy of the (now server-side applied)
	// StatefulSet makes: --check stays green.
	sts = apply(t, ns, "kubectl", strings.Replace(csaStatefulSet, "busybox:1", "busybox:2", 1), false)
	controllerRevision(t, sts, 2)
	migrateJSON(t, 0, "migrate", "--all-kinds", "-n", ns, "--check")
}
