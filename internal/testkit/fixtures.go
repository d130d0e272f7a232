// Package testkit holds the fixtures and helpers the unit tests of
// several packages share, the reader of the repository's testdata/ and
// the encoding of a Helm release. The test module (test/e2e, the demo)
// imports it too: its import path is under this module's, so internal/
// is open to it. Nothing of the plugin imports it.
package testkit

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// Object reads a YAML manifest into an object; a fixture that does not
// read fails the test.
func Object(t testing.TB, manifest string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(manifest), &u.Object); err != nil {
		t.Fatalf("fixture: %v", err)
	}
	return u
}

// Widget uses every FieldsV1 element kind: f: fields, k: keys (one and two
// key fields, an associative list inside another), v: set values, i: list
// indices and "." (the item itself); two managers share paths, one entry
// owns nothing, one has no fieldsV1, one is at another apiVersion, one is
// through the status subresource. Every piece of identity metadata is set.
const Widget = `
apiVersion: example.com/v1
kind: Widget
metadata:
  name: w1
  namespace: shop
  uid: 0b6c8f7e-1111-4222-8333-444455556666
  resourceVersion: "7"
  generation: 2
  creationTimestamp: "2026-01-01T00:00:00Z"
  deletionTimestamp: "2026-01-03T00:00:00Z"
  deletionGracePeriodSeconds: 30
  selfLink: /apis/example.com/v1/namespaces/shop/widgets/w1
  labels:
    app.kubernetes.io/name: web
    tier: frontend
  annotations:
    example.com/path: /a/b
  finalizers: [example.com/keep, example.com/other]
  managedFields:
  - manager: platform
    operation: Apply
    apiVersion: example.com/v1
    time: "2026-01-02T00:00:00Z"
    fieldsType: FieldsV1
    fieldsV1:
      f:metadata:
        f:labels:
          f:app.kubernetes.io/name: {}
        f:finalizers:
          v:"example.com/keep": {}
      f:spec:
        f:selector: {}
        f:containers:
          k:{"name":"web"}:
            .: {}
            f:name: {}
            f:image: {}
            f:ports:
              k:{"containerPort":80,"protocol":"TCP"}:
                .: {}
                f:containerPort: {}
                f:protocol: {}
        f:steps:
          i:0:
            f:run: {}
          i:1:
            f:run: {}
  - manager: team
    operation: Apply
    apiVersion: example.com/v1
    time: "2026-01-02T12:00:00Z"
    fieldsType: FieldsV1
    fieldsV1:
      f:spec:
        f:containers:
          k:{"name":"web"}:
            .: {}
            f:name: {}
            f:image: {}
  - manager: old-client
    operation: Update
    apiVersion: example.com/v1beta1
    fieldsType: FieldsV1
    fieldsV1:
      f:metadata:
        f:labels:
          f:tier: {}
  - manager: widget-controller
    operation: Update
    apiVersion: example.com/v1
    subresource: status
    time: "2026-01-02T13:00:00Z"
    fieldsType: FieldsV1
    fieldsV1:
      f:status:
        f:phase: {}
  - manager: idle
    operation: Apply
    apiVersion: example.com/v1
    fieldsType: FieldsV1
    fieldsV1: {}
  - manager: bare
    operation: Update
    apiVersion: example.com/v1
spec:
  replicas: 1
  selector:
    matchLabels:
      app: web
  containers:
  - name: web
    image: nginx:1.27
    ports:
    - containerPort: 80
      protocol: TCP
    - containerPort: 8080
      protocol: UDP
  steps:
  - run: make
    retries: 2
  - run: test
status:
  phase: Ready
  observedGeneration: 2
`
