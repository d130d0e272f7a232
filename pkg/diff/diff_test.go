package diff_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-ssa/kubectl-ssa/internal/scenario"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/conflict"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/diff"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/remedy"
)

// The Deployment the views' golden files use: platform and team-a apply,
// kubectl scales through /scale, kubectl-label labels, the controller
// writes status.
func fixture(t *testing.T) *unstructured.Unstructured {
	t.Helper()
	b, err := os.ReadFile("../render/testdata/deployment.yaml")
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(b, &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

func manifest(t *testing.T, s string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(s), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

func compute(t *testing.T, live *unstructured.Unstructured, applied string, o conflict.Options) *v1alpha1.DiffReport {
	t.Helper()
	src, err := conflict.NewOfflineSource([]*unstructured.Unstructured{live}, nil)
	if err != nil {
		t.Fatal(err)
	}
	o.AlsoForced = true
	asked, err := conflict.Explain(context.Background(), src, manifest(t, applied), o)
	if err != nil {
		t.Fatal(err)
	}
	d, err := diff.Compute(asked, diff.Options{Target: remedy.Target{ResourceArg: "deployment.v1.apps/web", Namespace: "shop", FieldManager: o.FieldManager}})
	if err != nil {
		t.Fatal(err)
	}
	return d.Report
}

func changes(r *v1alpha1.DiffReport) map[string]string {
	out := map[string]string{}
	for _, c := range r.Changes {
		out[c.Path.String()] = string(c.Change)
	}
	return out
}

func TestComputeClassifies(t *testing.T) {
	live := fixture(t)
	// team-a applies again without the annotation, with a new image: its
	// annotation goes, the image changes; .spec.replicas is kubectl's
	// (/scale): setting it conflicts.
	r := compute(t, live, `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  replicas: 9
  template:
    spec:
      containers:
      - name: web
        image: nginx:9
`, conflict.Options{FieldManager: "team-a"})
	got := changes(r)
	for path, want := range map[string]string{
		`.metadata.annotations["example.com/owner"]`: "removed",
		`.spec.replicas`: "modified",
		`.spec.template.spec.containers[name="web"].image`: "modified",
	} {
		if got[path] != want {
			t.Errorf("%s: %q, want %q (all: %v)", path, got[path], want, got)
		}
	}
	if len(r.Conflicts) != 2 || !r.HasChanges() { // replicas (kubectl on /scale) and the image (platform shares it)
		t.Errorf("conflicts %v", r.Conflicts)
	}
	for _, c := range r.Changes {
		if c.Path.String() == ".spec.replicas" && (!c.Conflict || len(c.OwnersBefore) != 1 || c.OwnersBefore[0].Subresource != "scale" || len(c.OwnersAfter) != 1 || c.OwnersAfter[0].Manager != "team-a") {
			t.Errorf("replicas: %+v", c)
		}
	}
	var stays []string
	for _, s := range r.Stays {
		stays = append(stays, s.Manager.Manager+"="+s.Command.String())
	}
	if !strings.Contains(strings.Join(stays, " "), "platform=kubectl ssa migrate rename deployment.v1.apps/web -n shop --from platform --field-manager=team-a") {
		t.Errorf("stays %v", stays)
	}
	if r.Result["spec"].(map[string]any)["replicas"] != int64(9) {
		t.Errorf("result replicas %v", r.Result["spec"])
	}
}

// teamAManifest is what team-a applied to the fixture.
const teamAManifest = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop, annotations: {example.com/owner: team-a}}
spec:
  template:
    spec:
      containers:
      - name: web
        image: nginx:1.27
`

func TestComputeNoChange(t *testing.T) {
	live := fixture(t)
	r := compute(t, live, teamAManifest, conflict.Options{FieldManager: "team-a"})
	if r.HasChanges() {
		t.Errorf("the same apply again changes nothing, got %+v", r.Changes)
	}
}

func TestExtract(t *testing.T) {
	live := fixture(t)
	e, err := diff.FindEntry(live, diff.Selector{Manager: "kubectl-label"})
	if err != nil {
		t.Fatal(err)
	}
	out, err := diff.Extract(live, conflict.BuiltinSchema(), e)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := yaml.Marshal(out.Object)
	want := "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  labels:\n    tier: frontend\n  name: web\n  namespace: shop\n"
	if string(b) != want {
		t.Errorf("got\n%s\nwant\n%s", b, want)
	}
	if _, err := diff.FindEntry(live, diff.Selector{Manager: "kubectl", Subresource: ""}); err == nil || !strings.Contains(err.Error(), "kubectl (Update, scale)") {
		t.Errorf("kubectl has only a /scale entry: %v", err)
	}
}

// kubectl rollout restart's stamp stays; no command offers the applier
// its ownership, which would make its next apply remove it and restart
// every pod. A hand-set field of the pod template is offered, saying that
// removing it rolls the pods.
func TestStaysOfThePodTemplate(t *testing.T) {
	live := (&scenario.State{Live: fixture(t)}).Run(t,
		scenario.Update{Manager: "kubectl-rollout", Mutate: scenario.Set("2026-11-23T10:00:00Z", "spec", "template", "metadata", "annotations", "kubectl.kubernetes.io/restartedAt")},
		scenario.Update{Manager: "kubectl-set", Mutate: scenario.Set("Always", "spec", "template", "spec", "schedulerName")}).Live
	r := compute(t, live, teamAManifest, conflict.Options{FieldManager: "team-a"})
	found := map[string]v1alpha1.Stay{}
	for _, s := range r.Stays {
		found[s.Manager.Manager] = s
	}
	if s := found["kubectl-rollout"]; len(s.Command) != 0 || !strings.Contains(s.Note, "restarting every pod") {
		t.Errorf("rollout restart's stay: %+v", s)
	}
	if s := found["kubectl-set"]; s.Command.String() != "kubectl ssa migrate rename deployment.v1.apps/web -n shop --from kubectl-set --field-manager=team-a" || !strings.Contains(s.Note, "rolls the pods") {
		t.Errorf("kubectl set's stay: %+v", s)
	}
}

// An owned "" that the built-in type leaves out of the object (omitempty)
// is in the extract: applied, it keeps its owner's ownership.
func TestExtractOwnedZeroValue(t *testing.T) {
	live := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(`apiVersion: networking.k8s.io/v1
kind: IPAddress
metadata:
  name: 10.0.0.5
  managedFields:
  - manager: platform
    operation: Apply
    apiVersion: networking.k8s.io/v1
    fieldsType: FieldsV1
    fieldsV1: {"f:spec":{"f:parentRef":{"f:group":{},"f:name":{},"f:namespace":{},"f:resource":{}}}}
spec:
  parentRef: {resource: services, namespace: default, name: web}
`), &live.Object); err != nil {
		t.Fatal(err)
	}
	e, err := diff.FindEntry(live, diff.Selector{Manager: "platform"})
	if err != nil {
		t.Fatal(err)
	}
	out, err := diff.Extract(live, conflict.BuiltinSchema(), e)
	if err != nil {
		t.Fatal(err)
	}
	if g, ok, _ := unstructured.NestedFieldNoCopy(out.Object, "spec", "parentRef", "group"); !ok || g != "" {
		t.Errorf("group %v (%v): %v", g, ok, out.Object)
	}
}
