package yamlpos

import (
	"testing"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/pathlang"
)

const manifest = `apiVersion: v1
kind: ConfigMap
metadata:
  name: web
data:
  a: "1"
---
# the Deployment
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
spec:
  replicas: 3
  template:
    spec:
      containers:
      - name: sidecar
        image: envoy
      - name: app
        image: nginx
        ports:
        - containerPort: 80
      finalizers: [a, b]
---
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Service
  metadata:
    name: web
  spec:
    ports: &p
    - port: 80
      protocol: UDP
`

func TestLine(t *testing.T) {
	ix, err := Parse([]byte(manifest))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, kind, namespace, path string
		line                        int
		exact                       bool
	}{
		{"scalar field", "Deployment", "shop", ".spec.replicas", 15, true},
		{"keyed item's field", "Deployment", "shop", `.spec.template.spec.containers[name="app"].image`, 22, true},
		{"keyed item", "Deployment", "shop", `.spec.template.spec.containers[name="sidecar"]`, 19, true},
		{"key the file leaves to a default", "Deployment", "shop", `.spec.template.spec.containers[name="app"].ports[containerPort=80,protocol="TCP"]`, 24, true},
		{"set item", "Deployment", "shop", `.spec.template.spec.finalizers[="b"]`, 25, true},
		{"field the file does not set", "Deployment", "shop", `.spec.template.spec.containers[name="app"].resources.limits`, 21, false},
		{"other document", "ConfigMap", "default", ".data.a", 6, true},
		{"List item", "Service", "default", `.spec.ports[port=80,protocol="UDP"].protocol`, 37, true},
		{"List item, other key value", "Service", "default", `.spec.ports[port=80,protocol="TCP"]`, 35, false},
		{"wrong namespace", "Deployment", "other", ".spec.replicas", 0, false},
		{"no such object", "Secret", "shop", ".data", 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := pathlang.ParsePath(c.path)
			if err != nil {
				t.Fatal(err)
			}
			line, exact := ix.Line(c.kind, c.namespace, "web", p)
			if line != c.line || exact != c.exact {
				t.Errorf("Line(%s) = %d, %v; want %d, %v", c.path, line, exact, c.line, c.exact)
			}
		})
	}
	if got := ix.Object("Deployment", "shop", "web"); got != 9 {
		t.Errorf("Object = %d, want 9 (the document's first key, after its comment)", got)
	}
}

func TestParseError(t *testing.T) {
	if _, err := Parse([]byte("a: [b\n")); err == nil {
		t.Error("Parse of a broken file: no error")
	}
}
