package conflict_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/conflict"
)

const webReplicas = `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
spec:
  replicas: 4
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: nginx:1
`

// TestClientSideDeletesWhatTheRenderDrops: Helm's client-side upgrade
// (a release recorded as client-side apply, upgraded the default way)
// deletes a field the last revision rendered and the render drops, even
// where an autoscaler's controller owns it now: replicas goes back to its
// default. Server-side, the same render keeps it (another manager owns
// it).
func TestClientSideDeletesWhatTheRenderDrops(t *testing.T) {
	s := &state{}
	update{Manager: "helm", Create: webReplicas}.Run(t, s)
	update{Manager: "kube-controller-manager", Subresource: "scale", Mutate: set(int64(3), "spec", "replicas")}.Run(t, s)
	original := manifest(t, webReplicas)
	render := manifest(t, webWith("nginx:2"))

	r, err := conflict.Simulate(conflict.Input{Live: s.Live, Applied: render, FieldManager: "helm",
		Schema: conflict.BuiltinSchema(), HasStatus: true, ClientSide: &conflict.ClientSide{Original: original}})
	if err != nil {
		t.Fatal(err)
	}
	var resets []string
	for _, rs := range r.Reset {
		resets = append(resets, rs.Path.APIServerString())
	}
	if diff := cmp.Diff([]string{".spec.replicas"}, resets); diff != "" {
		t.Errorf("client-side resets (-want +got)\n%s", diff)
	}
	// The server defaults the patched object before its field manager
	// records the update: replicas comes back as 1, helm's.
	if got, _, _ := unstructuredInt(r.Result.Object, "spec", "replicas"); got != 1 {
		t.Errorf("replicas %d in the result: the patch deletes it, the default puts 1 back", got)
	}
	if img := r.Result.Object["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)["image"]; img != "nginx:2" {
		t.Errorf("image %v, want nginx:2", img)
	}
	for _, e := range r.ManagedFields {
		if e.Manager == "helm" && e.Operation != "Update" {
			t.Errorf("helm's entry is %s: a client-side upgrade writes by Update", e.Operation)
		}
	}

	ssa, err := conflict.Simulate(conflict.Input{Live: s.Live, Applied: render, FieldManager: "helm",
		Schema: conflict.BuiltinSchema(), HasStatus: true, CSAUpgrade: []string{"helm"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(ssa.Reset) != 0 || len(ssa.Removed) != 0 {
		t.Errorf("server-side, replicas stays (the autoscaler's controller owns it): reset %v, removed %v", ssa.Reset, ssa.Removed)
	}
}

// TestClientSideOverwritesLiveChanges: the three-way patch sets what the
// render sets even where the live object was changed by hand since, and
// keeps what neither revision rendered.
func TestClientSideOverwritesLiveChanges(t *testing.T) {
	s := &state{}
	update{Manager: "helm", Create: webWith("nginx:1")}.Run(t, s)
	update{Manager: "kubectl-edit", Mutate: func(u *unstructured.Unstructured) {
		c := u.Object["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
		c["image"] = "nginx:hand"
		u.SetAnnotations(map[string]string{"team": "a"})
	}}.Run(t, s)
	r, err := conflict.Simulate(conflict.Input{Live: s.Live, Applied: manifest(t, webWith("nginx:1")), FieldManager: "helm",
		Schema: conflict.BuiltinSchema(), HasStatus: true, ClientSide: &conflict.ClientSide{Original: manifest(t, webWith("nginx:1"))}})
	if err != nil {
		t.Fatal(err)
	}
	c := r.Result.Object["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
	if c["image"] != "nginx:1" {
		t.Errorf("image %v: the three-way patch sets the render's nginx:1 back", c["image"])
	}
	if r.Result.GetAnnotations()["team"] != "a" {
		t.Errorf("annotations %v: what no revision rendered stays", r.Result.GetAnnotations())
	}
	if len(r.Removed)+len(r.Reset) != 0 {
		t.Errorf("nothing is deleted: removed %v, reset %v", r.Removed, r.Reset)
	}
}

func unstructuredInt(obj map[string]any, path ...string) (int64, bool, error) {
	return unstructured.NestedInt64(obj, path...)
}

// TestClientSideMergesByKeyWhateverTheNumberType: a merge key read as a
// float (a port from YAML or JSON) still matches the live item's integer,
// as the apiserver reads patches (ints kept): one port, not two.
func TestClientSideMergesByKeyWhateverTheNumberType(t *testing.T) {
	live := manifest(t, `
apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec:
  selector: {app: web}
  ports:
  - port: 80
    protocol: TCP
    targetPort: 80
`)
	_ = unstructured.SetNestedSlice(live.Object, []any{map[string]any{"port": int64(80), "protocol": "TCP", "targetPort": int64(80)}}, "spec", "ports")
	s := &state{}
	update{Manager: "helm", Create: "apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: shop}\nspec: {selector: {app: web}, ports: [{port: 80, protocol: TCP, targetPort: 80}]}\n"}.Run(t, s)
	s.Live.Object["spec"] = live.Object["spec"]
	orig := manifest(t, "apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: shop}\nspec:\n  selector: {app: web}\n  ports:\n  - port: 80\n")
	next := manifest(t, "apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: shop}\nspec:\n  selector: {app: web}\n  ports:\n  - port: 80\n    targetPort: 8080\n")
	r, err := conflict.Simulate(conflict.Input{Live: s.Live, Applied: next, FieldManager: "helm", Schema: conflict.BuiltinSchema(), HasStatus: true, ClientSide: &conflict.ClientSide{Original: orig}})
	if err != nil {
		t.Fatal(err)
	}
	ports, _, _ := unstructured.NestedSlice(r.Result.Object, "spec", "ports")
	if len(ports) != 1 || ports[0].(map[string]any)["targetPort"] != int64(8080) {
		t.Errorf("ports %v: one port, its targetPort 8080", ports)
	}
}

// TestControlledResetOfAControllersField: Helm's client-side patch
// deletes a field the last revision rendered that a controller took
// since (no autoscaler listed): the controller writes it back, so the
// reset is a controlled one; the same field taken by a person is not.
func TestControlledResetOfAControllersField(t *testing.T) {
	next := manifest(t, webWith("nginx:1"))
	for _, tt := range []struct {
		scaler string
		want   int
	}{{"kube-controller-manager", 1}, {"keda-operator", 1}, {"kubectl", 0}} {
		s := &state{}
		update{Manager: "helm", Create: webReplicas}.Run(t, s)
		update{Manager: tt.scaler, Subresource: "scale", Mutate: set(int64(3), "spec", "replicas")}.Run(t, s)
		src, err := conflict.NewOfflineSource([]*unstructured.Unstructured{s.Live}, nil)
		if err != nil {
			t.Fatal(err)
		}
		r, err := conflict.Explain(context.Background(), src, next, conflict.Options{FieldManager: "helm",
			ClientSide: &conflict.ClientSide{Original: manifest(t, webReplicas)}})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.ControlledResets) != tt.want {
			t.Errorf("%s: controlled resets %+v, want %d", tt.scaler, r.ControlledResets, tt.want)
		}
		if len(r.ControlledResets) == 1 && (r.ControlledResets[0].Path.APIServerString() != ".spec.replicas" || r.ControlledResets[0].Value != int64(1)) {
			t.Errorf("%s: %+v, want .spec.replicas reset to 1", tt.scaler, r.ControlledResets[0])
		}
	}
}

// TestControlledOverwrite: a client-side write that sets a field a
// controller owns (replicas an autoscaler's controller scaled to 3, the
// render's 4) never conflicts: it writes over it, and that is a
// controlled reset too (Set), where an apply would conflict.
func TestControlledOverwrite(t *testing.T) {
	s := &state{}
	update{Manager: "helm", Create: webReplicas}.Run(t, s)
	update{Manager: "kube-controller-manager", Subresource: "scale", Mutate: set(int64(3), "spec", "replicas")}.Run(t, s)
	src, err := conflict.NewOfflineSource([]*unstructured.Unstructured{s.Live}, nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := conflict.Explain(context.Background(), src, manifest(t, webReplicas), conflict.Options{FieldManager: "helm",
		ClientSide: &conflict.ClientSide{Original: manifest(t, webReplicas)}})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.ControlledResets) != 1 || !r.ControlledResets[0].Set || r.ControlledResets[0].Path.APIServerString() != ".spec.replicas" || r.ControlledResets[0].Value != int64(4) {
		t.Errorf("controlled resets %+v, want .spec.replicas set to 4 over the controller's 3", r.ControlledResets)
	}
}
