package e2e

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
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
		{diffCase{name: "headless created", applied: serviceOf("svc", "  clusterIP: None\n"+httpPort)}, []string{".spec.ipFamilies", ".spec.ipFamilyPolicy"}},
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
		{diffCase{name: "NodePort, a port added", setup: applyAs(serviceOf("svc", nodePortSvc), "ops"),
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
			// diff's result and --verify, against the server's dry run.
			checkDiffIn(t, c, ns)
			file := filepath.Join(t.TempDir(), "svc.yaml")
			writeFile(t, file, c.applied)
			res := ssa(t, "diff", "-n", ns, "-f", file, "--field-manager", "ops", "-o", "json")
			var rep diffReport
			if err := json.Unmarshal([]byte(res.stdout), &rep); err != nil {
				t.Fatalf("%v\n%s", err, res.stdout)
			}
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
