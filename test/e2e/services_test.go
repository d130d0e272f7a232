package e2e

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/util/csaupgrade"
)

// service is a Service manifest of the given spec lines (indented by
// two spaces, under spec).
func serviceOf(name, spec string) string {
	return "apiVersion: v1\nkind: Service\nmetadata: {name: " + name + "}\nspec:\n  selector: {app: web}\n" + spec
}

const (
	httpPort       = "  ports: [{name: http, port: 80}]\n"
	clusterIPSvc   = httpPort
	nodePortSvc    = "  type: NodePort\n" + httpPort
	lbSvc          = "  type: LoadBalancer\n" + httpPort
	lbLocalSvc     = "  type: LoadBalancer\n  externalTrafficPolicy: Local\n" + httpPort
	nodePortPath   = `.spec.ports[port=80,protocol="TCP"].nodePort`
	healthPortPath = ".spec.healthCheckNodePort"
)

var clusterIPPaths = []string{".spec.clusterIP", ".spec.clusterIPs", ".spec.ipFamilies", ".spec.ipFamilyPolicy"}

// TestVerifyServiceTypes: every Service type, created and changed to the
// types that allocate, is predicted as the server's dry run answers it,
// what the server allocates (cluster IPs, node ports, the health-check
// node port) aside, which diff lists as unknown; and explain-conflict
// --verify agrees (exit 0) instead of calling it our bug.
func TestVerifyServiceTypes(t *testing.T) {
	create := func(*testing.T, string) {}
	tests := []struct {
		c       diffCase
		unknown []string
	}{
		{diffCase{name: "ClusterIP created", applied: serviceOf("svc", clusterIPSvc)}, clusterIPPaths},
		{diffCase{name: "headless created", applied: serviceOf("svc", "  clusterIP: None\n"+httpPort)}, []string{".spec.clusterIPs", ".spec.ipFamilies", ".spec.ipFamilyPolicy"}},
		{diffCase{name: "ExternalName created", applied: serviceOf("svc", "  type: ExternalName\n  externalName: db.example.com\n")}, nil},
		{diffCase{name: "NodePort created", applied: serviceOf("svc", nodePortSvc)}, append(slices.Clone(clusterIPPaths), nodePortPath)},
		{diffCase{name: "LoadBalancer created", applied: serviceOf("svc", lbSvc)}, append(slices.Clone(clusterIPPaths), nodePortPath)},
		{diffCase{name: "LoadBalancer with traffic policy Local created", applied: serviceOf("svc", lbLocalSvc)},
			append(slices.Clone(clusterIPPaths), healthPortPath, nodePortPath)},
		{diffCase{name: "ClusterIP to NodePort", setup: applyAs(serviceOf("svc", clusterIPSvc), "ops"), applied: serviceOf("svc", nodePortSvc)},
			[]string{nodePortPath}},
		{diffCase{name: "ClusterIP to LoadBalancer", setup: applyAs(serviceOf("svc", clusterIPSvc), "ops"), applied: serviceOf("svc", lbSvc)},
			[]string{nodePortPath}},
		{diffCase{name: "ClusterIP to LoadBalancer with traffic policy Local", setup: applyAs(serviceOf("svc", clusterIPSvc), "ops"), applied: serviceOf("svc", lbLocalSvc)},
			[]string{healthPortPath, nodePortPath}},
		{diffCase{name: "LoadBalancer traffic policy Cluster to Local", setup: applyAs(serviceOf("svc", lbSvc), "ops"), applied: serviceOf("svc", lbLocalSvc)},
			[]string{healthPortPath}},
		{diffCase{name: "NodePort with a port added", setup: applyAs(serviceOf("svc", nodePortSvc), "ops"),
			applied: serviceOf("svc", "  type: NodePort\n  ports: [{name: http, port: 80}, {name: https, port: 443}]\n")},
			[]string{`.spec.ports[port=443,protocol="TCP"].nodePort`}},
		{diffCase{name: "NodePort unchanged", setup: applyAs(serviceOf("svc", nodePortSvc), "ops"), applied: serviceOf("svc", nodePortSvc)}, nil},
		{diffCase{name: "ExternalName to ClusterIP", setup: applyAs(serviceOf("svc", "  type: ExternalName\n  externalName: db.example.com\n"), "ops"),
			applied: serviceOf("svc", clusterIPSvc)}, clusterIPPaths},
	}
	for _, tt := range tests {
		t.Run(tt.c.name, func(t *testing.T) {
			c := tt.c
			c.kind, c.manager, c.code = "svc/svc", "ops", anyChange
			if c.setup == nil {
				c.setup = create
			}
			ns := namespace(t)
			c.setup(t, ns)
			file := filepath.Join(t.TempDir(), "svc.yaml")
			writeFile(t, file, c.applied)
			res := ssa(t, "diff", "-n", ns, "-f", file, "--field-manager", "ops", "-o", "json")
			var rep diffReport
			if err := json.Unmarshal([]byte(res.stdout), &rep); err != nil {
				t.Fatalf("exit %d: %v\n%s%s", res.code, err, res.stdout, res.stderr)
			}
			// diff's result and --verify, against the server's dry run.
			checkDiffIn(t, c, ns)
			got, want := slices.Sorted(slices.Values(rep.Unknown)), slices.Sorted(slices.Values(tt.unknown))
			if !slices.Equal(got, want) {
				t.Errorf("unknown %q, want %q", got, want)
			}
			if len(want) > 0 {
				text := ssa(t, "diff", "-n", ns, "-f", file, "--field-manager", "ops")
				if !strings.Contains(text.stdout, "not known here") || !strings.Contains(text.stdout, tt.unknown[len(tt.unknown)-1]) {
					t.Errorf("diff does not say what is not known:\n%s", text.stdout)
				}
			}
		})
	}
}

// TestVerifyPrivileged: a privileged container is predicted with a caveat
// naming the apiserver's --allow-privileged flag (which decides it); the
// test bed allows it, and --verify agrees.
func TestVerifyPrivileged(t *testing.T) {
	ns := namespace(t)
	file := filepath.Join(t.TempDir(), "d.yaml")
	writeFile(t, file, `apiVersion: apps/v1
kind: Deployment
metadata: {name: priv}
spec:
  selector: {matchLabels: {app: priv}}
  template:
    metadata: {labels: {app: priv}}
    spec:
      containers: [{name: c, image: 'busybox:1.36', securityContext: {privileged: true}}]
`)
	r := verifyJSON(t, 0, "explain-conflict", "-n", ns, "-f", file, "--verify", "-o", "json")
	if r.Verify.Status != "agrees" {
		t.Errorf("%+v", *r.Verify)
	}
	res := mustSSA(t, 0, "explain-conflict", "-n", ns, "-f", file)
	if !strings.Contains(res.stdout, "--allow-privileged") {
		t.Errorf("no caveat naming --allow-privileged:\n%s", res.stdout)
	}
}

// TestHelmSwitchKeepsDefaultedProtocol: a Service Helm created
// client-side holds, through Update, the protocol the apiserver
// defaulted; Helm 4's switch to server-side apply moves that ownership
// to its apply (csaupgrade), and the render leaves the protocol out.
// explain-conflict says what diff and the server do: the port keeps its
// protocol (reset to TCP, unchanged), nothing is removed.
func TestHelmSwitchKeepsDefaultedProtocol(t *testing.T) {
	ns := namespace(t)
	render := "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\nspec:\n  selector:\n    app: web\n  ports:\n  - port: 80\n"
	helmWrite(t, ns, "web", render, false)
	// What Helm applies: the render with its ownership metadata.
	u := helmObjects(t, ns, "web", render)[0]
	b, err := json.Marshal(u.Object)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "svc.json")
	writeFile(t, file, string(b))
	args := []string{"-n", ns, "-f", file, "--field-manager", "helm", "--csa-upgrade", "helm", "-o", "json"}
	res := ssa(t, append([]string{"explain-conflict"}, args...)...)
	var r conflictReport
	if err := json.Unmarshal([]byte(res.stdout), &r); err != nil {
		t.Fatalf("exit %d: %v\n%s%s", res.code, err, res.stdout, res.stderr)
	}
	if len(r.Removed) != 0 {
		t.Errorf("explain-conflict removes %q", r.Removed)
	}
	kept := false
	for _, rs := range r.Reset {
		kept = kept || rs.Path == `.spec.ports[port=80,protocol="TCP"].protocol` && rs.Value == "TCP" && rs.Unchanged
	}
	if !kept {
		t.Errorf("the protocol is not reset to TCP, unchanged: %+v", r.Reset)
	}
	var d diffReport
	dr := ssa(t, append([]string{"diff"}, args...)...)
	if err := json.Unmarshal([]byte(dr.stdout), &d); err != nil {
		t.Fatalf("%v\n%s", err, dr.stdout)
	}
	for _, c := range d.Changes {
		if strings.HasSuffix(c.Path, ".protocol") && c.Change != "ownership" && c.Change != "reset" {
			t.Errorf("diff: %s %s", c.Change, c.Path)
		}
	}
	// The server: the move made for real, then the apply.
	live, err := resourceFor(t, u).Get(context.Background(), "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := csaupgrade.UpgradeManagedFieldsPatch(live, sets.New("helm"), "helm")
	if err != nil || p == nil {
		t.Fatalf("helm's client-side ownership to move: %s, %v", p, err)
	}
	if _, err := resourceFor(t, u).Patch(context.Background(), "web", types.JSONPatchType, p, metav1.PatchOptions{FieldManager: "helm"}); err != nil {
		t.Fatal(err)
	}
	out, err := resourceFor(t, u).Apply(context.Background(), "web", u, metav1.ApplyOptions{FieldManager: "helm"})
	if err != nil {
		t.Fatal(err)
	}
	ports, _, _ := unstructured.NestedSlice(out.Object, "spec", "ports")
	if len(ports) != 1 || ports[0].(map[string]any)["protocol"] != "TCP" {
		t.Errorf("the server's ports: %v", ports)
	}
}
