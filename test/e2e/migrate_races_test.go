package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

// gate is a validating webhook on the Deployments of one namespace (and
// their status) that orders the deployment controller's writes against
// kubectl-ssa's, so that a race the controller wins now and then is won
// every time: a test holds the controller's status writes until a run is
// over, or makes a write of the undo wait until another write has landed.
// It never denies.
type gate struct {
	mu     sync.Mutex
	probed bool
	hold   chan struct{} // while open, status writes wait
	held   int           // how many waited
	// raceRestore: the undo's write that follows the restoring one (its
	// manager client-side apply's, the annotation already back) waits
	// until another write changed the object; raced tells it did.
	raceRestore, raced bool
}

// admissionRequest is what the gate reads of an AdmissionReview.
type admissionRequest struct {
	UID         string `json:"uid"`
	Name        string `json:"name"`
	Namespace   string `json:"namespace"`
	SubResource string `json:"subResource"`
	DryRun      bool   `json:"dryRun"`
	Options     struct {
		FieldManager string `json:"fieldManager"`
	} `json:"options"`
	OldObject *unstructured.Unstructured `json:"oldObject"`
}

func (g *gate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var review struct {
		Request admissionRequest `json:"request"`
	}
	if err := json.NewDecoder(r.Body).Decode(&review); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	req := review.Request
	g.mu.Lock()
	hold := g.hold
	race := g.raceRestore && !req.DryRun && req.SubResource == "" && req.Options.FieldManager == "kubectl-client-side-apply" &&
		req.OldObject != nil && req.OldObject.GetAnnotations()[lastAppliedKey] != ""
	switch {
	case req.DryRun:
		g.probed = true
	case race:
		g.raceRestore = false
	case req.SubResource == "status" && hold != nil:
		g.held++
	}
	g.mu.Unlock()
	switch {
	case req.DryRun:
	case req.SubResource == "status" && hold != nil:
		select {
		case <-hold:
		case <-r.Context().Done():
		case <-time.After(20 * time.Second):
		}
	case race:
		// Wait (within the webhook's timeout) for the controller's write:
		// once this returns, the apiserver's compare-and-swap of the
		// undo's write fails, and the undo gets a 409.
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) {
			now, err := env.dynamic.Resource(deployGVR).Namespace(req.Namespace).Get(r.Context(), req.Name, metav1.GetOptions{})
			if err == nil && now.GetResourceVersion() != req.OldObject.GetResourceVersion() {
				g.mu.Lock()
				g.raced = true
				g.mu.Unlock()
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	_ = json.NewEncoder(w).Encode(map[string]any{
		"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
		"response": map[string]any{"uid": req.UID, "allowed": true},
	})
}

// startGate serves the gate and registers it for the Deployments of ns,
// waiting until the apiserver calls it.
func startGate(t *testing.T, ns string, probe *unstructured.Unstructured) *gate {
	t.Helper()
	g := &gate{}
	srv, ca := webhookServer(t, g)
	clusterObject(t, fmt.Sprintf(`apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: e2e-gate-%s}
webhooks:
- name: gate.example.com
  admissionReviewVersions: [v1]
  sideEffects: None
  failurePolicy: Ignore
  timeoutSeconds: 30
  clientConfig: {url: %q, caBundle: %q}
  namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: %s}}
  rules:
  - {apiGroups: [apps], apiVersions: [v1], operations: [UPDATE], resources: [deployments, deployments/status]}
`, ns, srv.URL+"/validate", ca, ns))
	// The apiserver calls a webhook once its informer has the
	// configuration: probe with dry runs until it does.
	deadline := time.Now().Add(60 * time.Second)
	for {
		_, err := resourceFor(t, probe).Patch(context.Background(), probe.GetName(), types.MergePatchType, []byte(`{"metadata":{"labels":{"probe":"x"}}}`),
			metav1.PatchOptions{FieldManager: "probe", DryRun: []string{metav1.DryRunAll}})
		if err != nil {
			t.Fatalf("probing the webhook: %v", err)
		}
		g.mu.Lock()
		probed := g.probed
		g.mu.Unlock()
		if probed {
			return g
		}
		if time.Now().After(deadline) {
			t.Fatal("the apiserver did not call the webhook within 60s")
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// holdStatus makes the controller's status writes wait until the
// returned func is called (or the test ends).
func (g *gate) holdStatus(t *testing.T) func() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.hold = make(chan struct{})
	hold := g.hold
	var once sync.Once
	release := func() {
		once.Do(func() {
			g.mu.Lock()
			defer g.mu.Unlock()
			close(hold)
			g.hold = nil
		})
	}
	t.Cleanup(release)
	return release
}

// settled waits until the deployment controller has seen d's generation,
// written its revision and counted its Pods (which stay Pending: the test
// bed schedules none): then it writes d again only when d changes, and
// with the fields it owns already set.
func settled(t *testing.T, d *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		now := get(t, d)
		count := func(f ...string) int64 {
			n, _, _ := unstructured.NestedInt64(now.Object, f...)
			return n
		}
		want := count("spec", "replicas")
		if count("status", "observedGeneration") == now.GetGeneration() && now.GetAnnotations()["deployment.kubernetes.io/revision"] != "" &&
			count("status", "replicas") == want && count("status", "updatedReplicas") == want && count("status", "unavailableReplicas") == want {
			return now
		}
		if time.Now().After(deadline) {
			t.Fatalf("the deployment controller did not observe %s's generation %d within 60s", d.GetName(), now.GetGeneration())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Removing the last-applied annotation changes a Deployment's
// annotations, which bumps its generation (the Deployment's strategy
// counts annotations: they are copied to its ReplicaSets). The generation
// is the server's counter, no value: --verify passes. The controller's
// status writes wait until the run is over, so the verification's
// re-read always compares (without the gate the controller sometimes
// writes first, and the verification is a note).
func TestMigrateVerifyRemoveLastAppliedDeployment(t *testing.T) {
	ns := namespace(t)
	var ds []*unstructured.Unstructured
	for i := 0; i < 3; i++ {
		ds = append(ds, csaApply(t, ns, strings.Replace(csaDeployment, "name: app\n", fmt.Sprintf("name: app-%d\n", i), 1)))
	}
	g := startGate(t, ns, ds[0])
	before := map[string]int64{}
	for _, d := range ds {
		before[d.GetName()] = settled(t, d).GetGeneration()
	}
	release := g.holdStatus(t)
	r := migrateJSON(t, 0, "migrate", "-n", ns, "deploy", "--verify", "--remove-last-applied", "--backup-dir", filepath.Join(t.TempDir(), "b"))
	release()
	g.mu.Lock()
	t.Logf("%d status writes of the controller waited for the run", g.held)
	g.mu.Unlock()
	if r.Summary.Migrated != 3 || r.Summary.Failed != 0 || len(r.Objects) != 3 {
		t.Fatalf("migrate: %+v %+v", r.Summary, r.Objects)
	}
	for _, o := range r.Objects {
		if o.Result != "migrated" || o.Reason != "verified" {
			t.Errorf("%s: %s (%s), want migrated (verified)", o.Object.Name, o.Result, o.Reason)
		}
	}
	for _, d := range ds {
		now := get(t, d)
		if _, ok := now.GetAnnotations()[lastAppliedKey]; ok {
			t.Errorf("%s keeps the annotation", d.GetName())
		}
		// The write counted, once: what the verification let pass.
		if now.GetGeneration() != before[d.GetName()]+1 {
			t.Errorf("%s: generation %d, want %d", d.GetName(), now.GetGeneration(), before[d.GetName()]+1)
		}
	}
}

// Undo restores the annotation (which bumps the generation: the
// controller writes the status at once), then tries to put back the time
// of the entry that write stamped. The controller's write between the two
// gets the second a 409; the undo restored all the same and says so, not
// "already as in the backup". The gate makes the controller win that race
// every time. The apiserver then keeps the stamped time (a write of
// times alone changes nothing), and the undo says that too.
func TestMigrateUndoControllerWritesBetween(t *testing.T) {
	ns := namespace(t)
	d := csaApply(t, ns, csaDeployment)
	g := startGate(t, ns, d)
	orig := settled(t, d)
	backup := filepath.Join(t.TempDir(), "b")
	migrateJSON(t, 0, "migrate", "-n", ns, "deploy/app", "--remove-last-applied", "--backup-dir", backup)
	settled(t, d)

	csaTime := func(u *unstructured.Unstructured) string {
		for _, e := range u.GetManagedFields() {
			if e.Manager == "kubectl-client-side-apply" && e.Time != nil {
				return e.Time.UTC().Format(time.RFC3339)
			}
		}
		return "none"
	}
	afterSecondOf(csaTime(orig))
	g.mu.Lock()
	g.raceRestore = true
	g.mu.Unlock()
	u := migrateJSON(t, 0, "migrate", "undo", "--backup-dir", backup)
	g.mu.Lock()
	raced := g.raced
	g.mu.Unlock()
	if !raced {
		t.Fatal("the controller did not write between the undo's writes within 20s")
	}
	if u.Summary.Migrated != 1 || len(u.Objects) != 1 || u.Objects[0].Result != "migrated" {
		t.Fatalf("undo: %+v %+v, want app restored", u.Summary, u.Objects)
	}
	restored := get(t, d)
	if restored.GetAnnotations()[lastAppliedKey] != orig.GetAnnotations()[lastAppliedKey] {
		t.Errorf("undo did not restore the annotation")
	}
	if normalizeExcept(restored, "kube-controller-manager") != normalizeExcept(orig, "kube-controller-manager") {
		t.Errorf("undo: managedFields\n%s\nwant\n%s", normalize(restored.GetManagedFields()), normalize(orig.GetManagedFields()))
	}
	// Whether the apiserver takes the saved time back or keeps the
	// stamped one (it ignores a write of times alone: TestMigrateUndoTime),
	// the report says which.
	switch got, was := csaTime(restored), csaTime(orig); {
	case got != was && u.Objects[0].Reason != undoKeptTime:
		t.Errorf("kubectl-client-side-apply's entry at %s, before the migration %s: the undo's reason is %q, want %q", got, was, u.Objects[0].Reason, undoKeptTime)
	case got == was && u.Objects[0].Reason != "":
		t.Errorf("the entry's time is back (%s), yet the undo's reason is %q", got, u.Objects[0].Reason)
	}
}

// undoKeptTime is undo's reason when the apiserver kept the time its
// restoring write stamped.
const undoKeptTime = "its kubectl-client-side-apply entry keeps the time of the undo: the apiserver ignores a write that changes only managedFields times"

// afterSecondOf waits until this machine's clock (the test bed's) is past
// the second of an RFC 3339 time, so that a write now is stamped with a
// time told from it.
func afterSecondOf(stamp string) {
	for time.Now().UTC().Format(time.RFC3339) <= stamp {
		time.Sleep(50 * time.Millisecond)
	}
}

// TestMigrateUndoTime: undo puts a client-side-applied ConfigMap's
// managedFields and annotation back. Writing the annotation stamps its
// manager's entry with the time of the undo, and the apiserver ignores
// the write that would put the saved time back (it changes times alone):
// the undo says the entry keeps the time of the undo, not that it is as
// saved.
func TestMigrateUndoTime(t *testing.T) {
	ns := namespace(t)
	cm := csaApply(t, ns, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {a: \"1\"}\n")
	var was string
	for _, e := range cm.GetManagedFields() {
		if e.Manager == "kubectl-client-side-apply" && e.Time != nil {
			was = e.Time.UTC().Format(time.RFC3339)
		}
	}
	backup := filepath.Join(t.TempDir(), "b")
	migrateJSON(t, 0, "migrate", "-n", ns, "configmap/settings", "--remove-last-applied", "--backup-dir", backup)
	afterSecondOf(was)
	u := migrateJSON(t, 0, "migrate", "undo", "--backup-dir", backup)
	if len(u.Objects) != 1 || u.Objects[0].Result != "migrated" || u.Objects[0].Reason != undoKeptTime {
		t.Fatalf("undo: %+v, want restored with the reason %q", u.Objects, undoKeptTime)
	}
	now := get(t, cm)
	if now.GetAnnotations()[lastAppliedKey] != cm.GetAnnotations()[lastAppliedKey] {
		t.Error("undo did not restore the annotation")
	}
	for _, e := range now.GetManagedFields() {
		if e.Manager == "kubectl-client-side-apply" && e.Time != nil && e.Time.UTC().Format(time.RFC3339) == was {
			t.Errorf("the entry's time is the saved one (%s): the reason %q is wrong", was, undoKeptTime)
		}
	}
}
