package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/rand"
)

// cmJSON is a ConfigMap c with value at data.v, as JSON (the manifest
// format where U+007F and U+0085 survive reading).
func cmJSON(t *testing.T, value string) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "c"}, "data": map[string]any{"v": value}})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// serverApply is the real apply of manifest by manager "e2e".
func serverApply(t *testing.T, ns, manifest string) (*unstructured.Unstructured, error) {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := json.Unmarshal([]byte(manifest), &u.Object); err != nil {
		t.Fatal(err)
	}
	return env.dynamic.Resource(cmGVR).Namespace(ns).Apply(context.Background(), u.GetName(), u, metav1.ApplyOptions{FieldManager: "e2e"})
}

// TestApplyBodyReadAsTheServerReadsIt: the apiserver reads an apply body
// as YAML, and refuses one over its size limits; the prediction does the
// same, checked against the real server's answer to the same apply.
func TestApplyBodyReadAsTheServerReadsIt(t *testing.T) {
	ns := namespace(t)
	dir := t.TempDir()
	file := func(name, content string) string {
		f := filepath.Join(dir, name)
		writeFile(t, f, content)
		return f
	}

	// U+007F: refused by the server, and predicted so.
	del := cmJSON(t, "a\x7fb")
	if _, err := serverApply(t, ns, del); err == nil || !strings.Contains(err.Error(), "error decoding patch") {
		t.Fatalf("the server's answer to U+007F: %v", err)
	}
	r := mustSSA(t, 2, "explain-conflict", "-n", ns, "-f", file("del.json", del), "--verify")
	wantLine(t, r.stderr, `^error: ConfigMap/`+ns+`/c: the apiserver refuses the apply: error decoding patch: .*control characters`)

	// U+0085: a space on the server, and in the prediction, which
	// --verify confirms.
	nel := file("nel.json", cmJSON(t, "a\u0085b"))
	r = mustSSA(t, 0, "explain-conflict", "-n", ns, "-f", nel, "--verify", "-o", "json")
	var rep struct {
		Warnings []string `json:"warnings"`
		Verify   struct {
			Status string `json:"status"`
		} `json:"verify"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Verify.Status != "agrees" || !strings.Contains(strings.Join(rep.Warnings, "\n"), "reads an apply as YAML") {
		t.Errorf("verify %q, warnings %q", rep.Verify.Status, rep.Warnings)
	}
	d := mustSSA(t, 1, "diff", "-n", ns, "-f", nel, "-o", "json")
	if !strings.Contains(d.stdout, `"a b"`) {
		t.Errorf("the diff does not show the server's value:\n%s", d.stdout)
	}
	stored, err := serverApply(t, ns, cmJSON(t, "a\u0085b"))
	if err != nil {
		t.Fatal(err)
	}
	if v, _, _ := unstructured.NestedString(stored.Object, "data", "v"); v != "a b" {
		t.Errorf("the server stored %q", v)
	}
}

// TestApplySizeLimits: a ConfigMap over what one may hold, and an object
// over what the server stores, are refused by the server and predicted
// so; one under the limits applies.
func TestApplySizeLimits(t *testing.T) {
	ns := namespace(t)
	dir := t.TempDir()
	for _, c := range []struct {
		name  string
		size  int
		code  int
		error string
	}{
		{"2 MiB", 2 << 20, 2, `its values hold 2097168 bytes, over the 1048576 a ConfigMap may hold`},
		{"3.5 MiB", 7 << 19, 2, `its body is \d+ bytes, over the 3145728 a request may carry`},
		{"900 KiB", 900 << 10, 0, ``},
	} {
		t.Run(c.name, func(t *testing.T) {
			manifest := cmJSON(t, rand.String(16)+strings.Repeat("x", c.size))
			_, serr := serverApply(t, ns, manifest)
			if (serr != nil) != (c.error != "") {
				t.Fatalf("the server's answer: %v", serr)
			}
			f := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "")+".json")
			writeFile(t, f, manifest)
			r := mustSSA(t, c.code, "diff", "-n", ns, "-f", f)
			if c.error != "" {
				wantLine(t, r.stderr, `^error: ConfigMap/`+ns+`/c: the apiserver refuses the apply: `+c.error)
			}
		})
	}
}

// TestApplyOfValuesNotBase64: a Secret's data or a ConfigMap's
// binaryData value that is not base64 is refused by the server (it cannot
// convert the object); the prediction refuses it too, exit 2, naming the
// key and never the value; the same object encoded applies.
func TestApplyOfValuesNotBase64(t *testing.T) {
	ns := namespace(t)
	dir := t.TempDir()
	for _, c := range []struct{ name, kind, field, value, error string }{
		{"secret", "Secret", "data", "s3cret-value!!", `^error: Secret/` + ns + `/b: the apiserver refuses the apply: failed to convert new object to proper version: \.data\.k is not base64 \(illegal base64 data at input byte 6\): encode the value \(base64 -w0\), or set it as text under stringData$`},
		{"configmap", "ConfigMap", "binaryData", "s3cret-value!!", `^error: ConfigMap/` + ns + `/b: the apiserver refuses the apply: failed to convert new object to proper version: \.binaryData\.k is not base64 \(illegal base64 data at input byte 6\): encode the value \(base64 -w0\), or set it as text under data$`},
		{"encoded", "Secret", "data", "czNjcmV0", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			manifest := fmt.Sprintf(`{"apiVersion":"v1","kind":%q,"metadata":{"name":"b","namespace":%q},%q:{"k":%q}}`, c.kind, ns, c.field, c.value)
			f := filepath.Join(dir, c.name+".json")
			writeFile(t, f, manifest)
			u := &unstructured.Unstructured{}
			if err := json.Unmarshal([]byte(manifest), &u.Object); err != nil {
				t.Fatal(err)
			}
			gvr := schema.GroupVersionResource{Version: "v1", Resource: strings.ToLower(c.kind) + "s"}
			_, err := env.dynamic.Resource(gvr).Namespace(ns).Apply(context.Background(), "b", u, metav1.ApplyOptions{FieldManager: "e2e", DryRun: []string{metav1.DryRunAll}})
			if (err != nil) != (c.error != "") || c.error != "" && !strings.Contains(err.Error(), "illegal base64 data at input byte 6") {
				t.Fatalf("the server's answer: %v", err)
			}
			for _, verb := range []string{"explain-conflict", "diff"} {
				code := 0
				if c.error != "" {
					code = 2
				} else if verb == "diff" {
					code = 1
				}
				r := mustSSA(t, code, verb, "-f", f)
				if c.error != "" {
					wantLine(t, r.stderr, c.error)
				}
				if strings.Contains(r.stdout+r.stderr, c.value) && c.error != "" {
					t.Errorf("%s printed the value:\n%s\n%s", verb, r.stdout, r.stderr)
				}
			}
		})
	}
}

// TestVerifyDenialOfAClientSideObject: a policy denies the apply of an
// object applied client-side; the server denies it too. --verify compares
// like with like (kubectl's first apply, which the dry run is, and the
// denial evaluated on its sequence): both deny, exit 1, no false alarm.
func TestVerifyDenialOfAClientSideObject(t *testing.T) {
	ns := namespace(t)
	name := "e2e-deny-cm-" + rand.String(5)
	clusterObject(t, `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: `+name+`}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [configmaps]}
    namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: `+ns+`}}
  validations:
  - expression: "!has(object.metadata.labels) || !('deny' in object.metadata.labels)"
    message: "no ConfigMap labelled deny"
`)
	clusterObject(t, "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicyBinding\nmetadata: {name: "+name+"}\nspec: {policyName: "+name+", validationActions: [Deny]}\n")
	probe := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: probe, labels: {deny: 'yes'}}\n"
	waitForServer(t, ns, probe, func(_ *unstructured.Unstructured, err error) bool {
		return err != nil && strings.Contains(err.Error(), "no ConfigMap labelled deny")
	})
	csaApply(t, ns, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"a":"1"}}`)
	denied := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, labels: {deny: 'yes'}}\ndata: {a: '2'}\n"
	f := filepath.Join(t.TempDir(), "c.yaml")
	writeFile(t, f, denied)
	r := ssa(t, "explain-conflict", "-n", ns, "-f", f, "--verify")
	if r.code != 1 || strings.Contains(r.stderr, "report this") {
		t.Errorf("exit %d, want 1 (denied, verified)\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	wantLine(t, r.stdout, "no ConfigMap labelled deny")
}
