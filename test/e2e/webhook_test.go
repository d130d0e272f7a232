package e2e

import (
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// webhookServer serves h over TLS for the apiserver to call, until the
// test ends; caBundle is its certificate as a webhook's clientConfig (or a
// CRD's conversion) names it.
func webhookServer(t *testing.T, h http.Handler) (srv *httptest.Server, caBundle string) {
	t.Helper()
	srv = httptest.NewTLSServer(h)
	t.Cleanup(srv.Close)
	return srv, base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}))
}

// knobCRD serves Knob at v1 (spec.size) and v2 (spec.replicas), converted
// by a webhook: the two versions differ in shape, and only the webhook
// knows how.
const knobCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: knobs.example.com
spec:
  group: example.com
  names: {kind: Knob, plural: knobs, singular: knob}
  scope: Namespaced
  conversion:
    strategy: Webhook
    webhook:
      conversionReviewVersions: [v1]
      clientConfig: {url: %q, caBundle: %q}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, properties: {size: {type: integer}}}
  - name: v2
    served: true
    storage: false
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, properties: {replicas: {type: integer}}}
`

// knobConverter is the conversion webhook: spec.size at v1 is
// spec.replicas at v2.
func knobConverter(w http.ResponseWriter, r *http.Request) {
	var review map[string]any
	if err := json.NewDecoder(r.Body).Decode(&review); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	req, _ := review["request"].(map[string]any)
	to, _ := req["desiredAPIVersion"].(string)
	objs, _ := req["objects"].([]any)
	for _, o := range objs {
		obj, _ := o.(map[string]any)
		obj["apiVersion"] = to
		spec, _ := obj["spec"].(map[string]any)
		if spec == nil {
			continue
		}
		from, into := "size", "replicas"
		if to == "example.com/v1" {
			from, into = "replicas", "size"
		}
		if v, ok := spec[from]; ok {
			delete(spec, from)
			spec[into] = v
		}
	}
	review["response"] = map[string]any{
		"uid": req["uid"], "convertedObjects": objs, "result": map[string]any{"status": "Success"},
	}
	delete(review, "request")
	_ = json.NewEncoder(w).Encode(review)
}

// A custom resource whose versions a webhook converts can't be predicted
// here once a manager is recorded at another version: explain-conflict
// says so with exit 2 instead of guessing "no conflict", which is what
// changing the apiVersion would give (the server conflicts on
// .spec.replicas, which alpha owns as .spec.size at v1).
func TestExplainConflictConversionWebhook(t *testing.T) {
	srv, ca := webhookServer(t, http.HandlerFunc(knobConverter))
	crd := fmt.Sprintf(knobCRD, srv.URL+"/convert", ca)
	apply(t, "", "test-setup", crd, true)
	waitEstablished(t, "knobs.example.com")

	ns := namespace(t)
	apply(t, ns, "alpha", "apiVersion: example.com/v1\nkind: Knob\nmetadata: {name: d}\nspec: {size: 3}\n", false)
	manifest := filepath.Join(t.TempDir(), "knob.yaml")
	writeFile(t, manifest, "apiVersion: example.com/v2\nkind: Knob\nmetadata: {name: d}\nspec: {replicas: 5}\n")

	// The server, through the webhook, conflicts.
	u := parse(t, "apiVersion: example.com/v2\nkind: Knob\nmetadata: {name: d}\nspec: {replicas: 5}\n")
	u.SetNamespace(ns)
	if _, err := resourceFor(t, u).Apply(t.Context(), "d", u, metav1.ApplyOptions{FieldManager: "beta", DryRun: []string{metav1.DryRunAll}}); err == nil || !strings.Contains(err.Error(), "conflict") {
		t.Fatalf("the server's dry run: %v, want a conflict on .spec.replicas", err)
	}

	r := mustSSA(t, 2, "explain-conflict", "-n", ns, "-f", manifest, "--field-manager", "beta")
	if !strings.Contains(r.stderr, "conversion webhook") || !strings.Contains(r.stderr, "alpha") {
		t.Errorf("want a one-line error naming the webhook and the manager alpha, got:\n%s", r.stderr)
	}
	if strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 || r.stdout != "" {
		t.Errorf("want one line on stderr and nothing on stdout, got:\nstdout: %s\nstderr: %s", r.stdout, r.stderr)
	}
}
