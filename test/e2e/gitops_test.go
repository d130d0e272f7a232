package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/itchyny/gojq"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"
)

// The incidents of the year on the test bed, with real writes: an
// autoscaler's replicas and a CA injector's caBundle against Helm 4, an
// edit in Argo CD's UI against Argo CD's sync. explain-conflict names the
// tool that wrote the field and writes the fix in the applier's terms;
// each snippet is valid for its tool's published CRD (the server's strict
// validation and pruning keep all of it); the fix's effect, simulated as
// the tool does it, makes the next real apply succeed with every value
// the owner holds unchanged.

var gitopsCRDsOnce sync.Once

// gitopsCRDs installs Argo CD's Application and Flux's Kustomization and
// HelmRelease CRDs (testdata/gitops-crds, with their provenance).
func gitopsCRDs(t *testing.T) {
	t.Helper()
	gitopsCRDsOnce.Do(func() { installCRDs(t, "gitops-crds", 3) })
}

// installCRDs installs the n CRDs of testdata/DIR and waits until they
// are established.
func installCRDs(t *testing.T, dir string, n int) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", dir, "*.yaml"))
	if err != nil || len(files) != n {
		t.Fatalf("the CRDs of testdata/%s: %v %v", dir, files, err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		crd := apply(t, "", "test-setup", strings.TrimPrefix(string(b), "---\n"), true)
		waitEstablished(t, crd.GetName())
	}
}

// remedyOut is a resolution of the ConflictReport, as printed.
type remedyOut struct {
	Kind    string   `json:"kind"`
	Tool    string   `json:"tool"`
	Summary string   `json:"summary"`
	Paths   []string `json:"paths"`
	Snippet string   `json:"snippet"`
	Into    *struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Edit       string `json:"edit"`
	} `json:"into"`
}

// toolFixes runs explain-conflict -o json and returns the tool's
// remedies by kind, checking that the apply conflicts.
func toolFixes(t *testing.T, args ...string) map[string]remedyOut {
	t.Helper()
	r := mustSSA(t, 1, append([]string{"explain-conflict", "-o", "json"}, args...)...)
	var rep struct {
		Conflicts   []struct{ Path, Manager string } `json:"conflicts"`
		Resolutions []remedyOut                      `json:"resolutions"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	out := map[string]remedyOut{}
	for _, rm := range rep.Resolutions {
		if rm.Tool != "" {
			out[rm.Kind] = rm
		}
	}
	return out
}

// minimal are the smallest valid objects of the tools' kinds.
var minimal = map[string]string{
	"Application": `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: shop}
spec:
  project: default
  destination: {server: "https://kubernetes.default.svc", namespace: shop}
  source: {repoURL: "https://example.com/shop.git", path: deploy, targetRevision: HEAD}
`,
	"Kustomization": `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: shop}
spec:
  interval: 10m
  prune: true
  path: ./deploy
  sourceRef: {kind: GitRepository, name: shop}
`,
	"HelmRelease": `apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: shop}
spec:
  interval: 10m
  chart:
    spec:
      chart: shop
      sourceRef: {kind: HelmRepository, name: charts}
`,
}

// mergeSnippet merges a snippet into an object as its remedy says:
// maps key by key, lists by adding the snippet's items.
func mergeSnippet(into, snippet any) any {
	switch s := snippet.(type) {
	case map[string]any:
		m, _ := into.(map[string]any)
		if m == nil {
			m = map[string]any{}
		}
		for k, v := range s {
			m[k] = mergeSnippet(m[k], v)
		}
		return m
	case []any:
		l, _ := into.([]any)
		return append(l, s...)
	}
	return snippet
}

// holds tells whether got holds all of want: maps key by key, lists item
// by item (each item of want held by one of got).
func holds(got, want any) bool {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return false
		}
		for k, v := range w {
			if !holds(g[k], v) {
				return false
			}
		}
		return true
	case []any:
		g, ok := got.([]any)
		if !ok {
			return false
		}
		for _, wi := range w {
			found := false
			for _, gi := range g {
				found = found || holds(gi, wi)
			}
			if !found {
				return false
			}
		}
		return true
	}
	a, errA := json.Marshal(got)
	b, errB := json.Marshal(want)
	return errA == nil && errB == nil && string(a) == string(b)
}

// checkSnippet server-side dry-runs the tool's minimal object carrying
// the snippet, with strict field validation (an unknown field is an
// error), and checks that the stored object holds all of it (pruning
// would drop what the schema does not know).
func checkSnippet(t *testing.T, ns string, rm remedyOut) {
	t.Helper()
	if rm.Into == nil || rm.Into.Edit != "merge" {
		t.Fatalf("%s: not a snippet to merge into an object: %+v", rm.Kind, rm)
	}
	base, ok := minimal[rm.Into.Kind]
	if !ok {
		t.Fatalf("%s: no minimal %s", rm.Kind, rm.Into.Kind)
	}
	obj := parse(t, base)
	if obj.GetAPIVersion() != rm.Into.APIVersion {
		t.Fatalf("%s: goes into %s %s, the CRD serves %s", rm.Kind, rm.Into.APIVersion, rm.Into.Kind, obj.GetAPIVersion())
	}
	var snippet map[string]any
	if err := yaml.Unmarshal([]byte(rm.Snippet), &snippet); err != nil {
		t.Fatalf("%s: the snippet is not YAML: %v\n%s", rm.Kind, err, rm.Snippet)
	}
	obj.Object = mergeSnippet(obj.Object, snippet).(map[string]any)
	obj.SetNamespace(ns)
	out := dryRunStrict(t, obj)
	if !holds(out.Object, snippet) {
		got, _ := yaml.Marshal(out.Object["spec"])
		t.Errorf("%s: the server kept less than the snippet (pruned):\nsnippet:\n%s\nstored spec:\n%s", rm.Kind, rm.Snippet, got)
	}
}

// dryRunStrict server-side applies obj as a dry run with strict field
// validation.
func dryRunStrict(t *testing.T, obj *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	out, err := tryDryRunStrict(t, obj)
	if err != nil {
		t.Fatalf("the server refuses %s %s: %v", obj.GetAPIVersion(), obj.GetKind(), err)
	}
	return out
}

func tryDryRunStrict(t *testing.T, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	t.Helper()
	body, err := json.Marshal(obj.Object)
	if err != nil {
		t.Fatal(err)
	}
	return resourceFor(t, obj).Patch(context.Background(), obj.GetName(), types.ApplyPatchType, body,
		metav1.PatchOptions{FieldManager: "e2e-snippet", DryRun: []string{metav1.DryRunAll}, FieldValidation: "Strict"})
}

// normal is v as JSON reads it (numbers float64), as gojq takes it.
func normal(t *testing.T, v any) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// respectIgnoreDifferences does to a manifest what Argo CD's sync does
// with RespectIgnoreDifferences=true (controller/sync.go
// normalizeTargetResources): the fields the jq path expressions name in
// the live object get their live values. gojq is the jq Argo CD runs.
func respectIgnoreDifferences(t *testing.T, manifest, live map[string]any, exprs []string) map[string]any {
	t.Helper()
	target, from := normal(t, manifest), normal(t, live)
	for _, expr := range exprs {
		q, err := gojq.Parse("path(" + expr + ")")
		if err != nil {
			t.Fatalf("jq %q: %v", expr, err)
		}
		iter := q.Run(from)
		n := 0
		for {
			v, ok := iter.Next()
			if !ok {
				break
			}
			if err, ok := v.(error); ok {
				t.Fatalf("jq %q: %v", expr, err)
			}
			p := v.([]any)
			value, err := gojq.Parse("getpath($p)")
			if err != nil {
				t.Fatal(err)
			}
			code, err := gojq.Compile(value, gojq.WithVariables([]string{"$p"}))
			if err != nil {
				t.Fatal(err)
			}
			got, _ := code.Run(from, p).Next()
			setPath(t, target, p, got)
			n++
		}
		if n == 0 {
			t.Errorf("jq %q names nothing in the live object", expr)
		}
	}
	return target
}

// setPath sets a value at a jq path (keys and indexes).
func setPath(t *testing.T, obj any, p []any, v any) {
	t.Helper()
	cur := obj
	for i, step := range p {
		last := i == len(p)-1
		switch s := step.(type) {
		case string:
			m := cur.(map[string]any)
			if last {
				m[s] = v
				return
			}
			cur = m[s]
		case int:
			l := cur.([]any)
			if last {
				l[s] = v
				return
			}
			cur = l[s]
		default:
			t.Fatalf("jq path step %T", step)
		}
	}
}

// pointerValue reads a JSON Pointer.
func pointerValue(obj any, ptr string) (any, bool) {
	cur := obj
	for _, tok := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch c := cur.(type) {
		case map[string]any:
			v, ok := c[tok]
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(c) {
				return nil, false
			}
			cur = c[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// fluxAdopt does to a manifest what Flux's apply does with a drift
// ignore rule on a field that no other manager applies (fluxcd/pkg
// ssa/manager_apply.go, driftAdopt): the live value goes into the
// payload at the pointer.
func fluxAdopt(t *testing.T, manifest, live map[string]any, ptrs []string) map[string]any {
	t.Helper()
	target, from := normal(t, manifest), normal(t, live)
	for _, ptr := range ptrs {
		v, ok := pointerValue(from, ptr)
		if !ok {
			t.Fatalf("%s names nothing in the live object", ptr)
		}
		var p []any
		for _, tok := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
			tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
			if i, err := strconv.Atoi(tok); err == nil {
				p = append(p, i)
			} else {
				p = append(p, tok)
			}
		}
		setPath(t, target, p, v)
	}
	return target
}

// snippetList reads a list of strings at a path of a snippet.
func snippetList(t *testing.T, snippet string, path ...string) []string {
	t.Helper()
	var m map[string]any
	if err := yaml.Unmarshal([]byte(snippet), &m); err != nil {
		t.Fatal(err)
	}
	var cur any = m
	for _, p := range path {
		switch c := cur.(type) {
		case map[string]any:
			cur = c[p]
		case []any:
			i, _ := strconv.Atoi(p)
			cur = c[i]
		}
	}
	l, _ := cur.([]any)
	out := make([]string, len(l))
	for i, v := range l {
		out[i] = fmt.Sprint(v)
	}
	return out
}

// writeManifest writes an object to a file for -f.
func writeManifest(t *testing.T, obj map[string]any) string {
	t.Helper()
	b, err := yaml.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), "manifest.yaml")
	if err := os.WriteFile(f, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// wants checks that the text has each phrase.
func wants(t *testing.T, text string, phrases ...string) {
	t.Helper()
	for _, p := range phrases {
		if !strings.Contains(text, p) {
			t.Errorf("the explanation does not say %q:\n%s", p, text)
		}
	}
}

func nested(t *testing.T, obj *unstructured.Unstructured, path ...string) any {
	t.Helper()
	v, ok, err := unstructured.NestedFieldNoCopy(obj.Object, path...)
	if err != nil || !ok {
		t.Fatalf("%s has no %v: %v", obj.GetName(), path, err)
	}
	return v
}

func TestGitOpsIncidents(t *testing.T) {
	gitopsCRDs(t)

	// A strict dry run refuses a snippet with a misspelt field: the
	// checks below can fail.
	t.Run("a misspelt snippet fails", func(t *testing.T) {
		ns := namespace(t)
		obj := parse(t, minimal["Application"])
		obj.SetNamespace(ns)
		_ = unstructured.SetNestedSlice(obj.Object, []any{map[string]any{"kind": "Deployment", "managedFieldManagers": []any{"x"}}}, "spec", "ignoreDifferences")
		if _, err := tryDryRunStrict(t, obj); err == nil || !strings.Contains(err.Error(), "managedFieldManagers") {
			t.Errorf("a misspelt field passes: %v", err)
		}
	})

	t.Run("an autoscaler's replicas against Helm 4", func(t *testing.T) {
		ns := namespace(t)
		deploy := func(replicas, image string) string {
			return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: %s
  annotations: {meta.helm.sh/release-name: shop, meta.helm.sh/release-namespace: %s}
spec:
  %sselector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: "%s"}]
`, ns, ns, replicas, image)
		}
		// helm install (Helm 4: server-side apply as "helm"), then the
		// HPA's controller scales through /scale.
		apply(t, ns, "helm", deploy("replicas: 2\n  ", "nginx:1.27"), false)
		live := patch(t, parse(t, deploy("", "")), "kube-controller-manager", `{"spec":{"replicas":5}}`, "scale")
		// The chart's next version changes the image and still renders
		// replicas.
		upgrade := parse(t, deploy("replicas: 2\n  ", "nginx:1.28"))
		file := writeManifest(t, upgrade.Object)

		text := mustSSA(t, 1, "explain-conflict", "-f", file, "--field-manager", "helm")
		wants(t, text.stdout, "likely:     the HorizontalPodAutoscaler: kube-controller-manager's horizontal-pod-autoscaler controller scales the object through /scale",
			"In the chart, stop rendering .spec.replicas", "{{- if not .Values.autoscaling.enabled }}",
			`Add to the helm upgrade of release "shop" in namespace "`+ns+`":`, "--server-side=true --force-conflicts")
		helm := toolFixes(t, "-f", file, "--field-manager", "helm")
		if rm := helm["helm-chart"]; !strings.Contains(rm.Snippet, "replicas: {{ .Values.replicaCount }}") || rm.Into == nil || rm.Into.Edit != "replace" {
			t.Errorf("the chart change: %+v", rm)
		}

		// Flux: both objects' snippets hold on their CRDs.
		flux := toolFixes(t, "-f", file, "--field-manager", "helm", "--for", "flux")
		for _, k := range []string{"flux-kustomization-ignore", "flux-helmrelease-ignore"} {
			checkSnippet(t, ns, flux[k])
		}
		argo := toolFixes(t, "-f", file, "--field-manager", "helm", "--for", "argocd")
		checkSnippet(t, ns, argo["argocd-ignore-differences"])
		if got := snippetList(t, argo["argocd-ignore-differences"].Snippet, "spec", "ignoreDifferences", "0", "managedFieldsManagers"); !reflect.DeepEqual(got, []string{"kube-controller-manager"}) {
			t.Errorf("Argo CD's managedFieldsManagers: %v", got)
		}

		// Flux's rule, as its apply uses it (the owner is an Update
		// manager: the live value is adopted), on the applier's next
		// apply: no conflict, nothing reset.
		ptrs := snippetList(t, flux["flux-kustomization-ignore"].Snippet, "spec", "ignore", "0", "paths")
		adopted := writeManifest(t, fluxAdopt(t, upgrade.Object, live.Object, ptrs))
		mustSSA(t, 0, "explain-conflict", "-f", adopted, "--field-manager", "helm")

		// The chart change: replicas not rendered. The next helm upgrade
		// (no --force-conflicts) succeeds; replicas stay the HPA's.
		unstructured.RemoveNestedField(upgrade.Object, "spec", "replicas")
		fixed := writeManifest(t, upgrade.Object)
		mustSSA(t, 0, "explain-conflict", "-f", fixed, "--field-manager", "helm")
		out := apply(t, ns, "helm", mustRead(t, fixed), false)
		if got := nested(t, out, "spec", "replicas"); got != int64(5) {
			t.Errorf("replicas after the upgrade: %v, want the HPA's 5", got)
		}
		containers, _, _ := unstructured.NestedSlice(out.Object, "spec", "template", "spec", "containers")
		if img := containers[0].(map[string]any)["image"]; img != "nginx:1.28" {
			t.Errorf("the upgrade did not change the image: %v", img)
		}
	})

	t.Run("an edit in Argo CD's UI against Argo CD's sync", func(t *testing.T) {
		ns := namespace(t)
		service := func(label string) string {
			return fmt.Sprintf(`apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: %s
  labels: {tier: %s}
spec:
  selector: {app: web}
  ports: [{name: http, port: 80, protocol: TCP, targetPort: 8080}]
`, ns, label)
		}
		// Argo CD syncs; someone edits the container port the Service
		// targets in Argo CD's UI (argocd-server's patch).
		apply(t, ns, "argocd-controller", service("web"), false)
		live := patch(t, parse(t, service("web")), "argocd-server", `{"spec":{"ports":[{"name":"http","port":80,"protocol":"TCP","targetPort":9090}]}}`)
		next := parse(t, service("frontend"))
		file := writeManifest(t, next.Object)

		text := mustSSA(t, 1, "explain-conflict", "-f", file, "--field-manager", "argocd-controller")
		wants(t, text.stdout, `likely:     Argo CD's UI`, `"argocd-controller" is Argo CD's sync`, "it does not fail, it takes the conflicting fields",
			"In Argo CD, leave them to \"argocd-server\"", "This keeps the edit made in Argo CD's UI", "RespectIgnoreDifferences=true")
		argo := toolFixes(t, "-f", file, "--field-manager", "argocd-controller")
		rm := argo["argocd-ignore-differences"]
		checkSnippet(t, ns, rm)
		exprs := snippetList(t, rm.Snippet, "spec", "ignoreDifferences", "0", "jqPathExpressions")
		if want := []string{`.spec.ports[] | select(.port == 80 and .protocol == "TCP") | .targetPort`}; !reflect.DeepEqual(exprs, want) {
			t.Errorf("jqPathExpressions %q, want %q", exprs, want)
		}

		// The sync with RespectIgnoreDifferences: the live targetPort goes
		// into what Argo CD applies, which it forces. The label changes,
		// the UI's port stays.
		synced := respectIgnoreDifferences(t, next.Object, live.Object, exprs)
		fixed := writeManifest(t, synced)
		mustSSA(t, 0, "explain-conflict", "-f", fixed, "--field-manager", "argocd-controller")
		out := apply(t, ns, "argocd-controller", mustRead(t, fixed), true)
		ports, _, _ := unstructured.NestedSlice(out.Object, "spec", "ports")
		if tp := ports[0].(map[string]any)["targetPort"]; tp != int64(9090) {
			t.Errorf("targetPort after the sync: %v, want the UI's 9090", tp)
		}
		if l := out.GetLabels()["tier"]; l != "frontend" {
			t.Errorf("the sync did not change the label: %q", l)
		}
	})

	t.Run("cert-manager's caBundle against Helm 4", func(t *testing.T) {
		ns := namespace(t)
		name := ns + "-hooks"
		hooks := func(ca string, timeout int) string {
			return fmt.Sprintf(`apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: %s
  annotations: {cert-manager.io/inject-ca-from: %s/serving, meta.helm.sh/release-name: hooks, meta.helm.sh/release-namespace: %s}
webhooks:
- name: check.shop.example.com
  admissionReviewVersions: [v1]
  sideEffects: None
  failurePolicy: Ignore
  timeoutSeconds: %d
  clientConfig:
    %sservice: {name: hooks, namespace: %s}
`, name, ns, ns, timeout, ca, ns)
		}
		// The chart renders a placeholder caBundle; cainjector applies
		// the CA with ForceOwnership, as it does.
		apply(t, "", "helm", hooks("caBundle: b2xk\n    ", 5), false)
		t.Cleanup(func() {
			_ = env.client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(context.Background(), name, metav1.DeleteOptions{})
		})
		apply(t, "", "cert-manager-cainjector", fmt.Sprintf(`{"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration", "metadata": {"name": %q},
			"webhooks": [{"name": "check.shop.example.com", "clientConfig": {"caBundle": "bmV3"}}]}`, name), true)
		next := parse(t, hooks("caBundle: b2xk\n    ", 7))
		file := writeManifest(t, next.Object)

		text := mustSSA(t, 1, "explain-conflict", "-f", file, "--field-manager", "helm")
		wants(t, text.stdout, "likely:     cert-manager's CA injector (cainjector) injecting the CA into caBundle",
			`In the chart, stop rendering .webhooks[name="check.shop.example.com"].clientConfig.caBundle`, "remove the last line here:", "caBundle: ...")
		for _, tool := range []string{"flux", "argocd"} {
			for _, rm := range toolFixes(t, "-f", file, "--field-manager", "helm", "--for", tool) {
				// The webhook configuration is cluster-scoped: the
				// tool's object sits in the test's namespace.
				checkSnippet(t, ns, rm)
			}
		}

		// The chart change: caBundle not rendered. The upgrade succeeds,
		// the CA stays cainjector's.
		webhooks, _, _ := unstructured.NestedSlice(next.Object, "webhooks")
		unstructured.RemoveNestedField(webhooks[0].(map[string]any), "clientConfig", "caBundle")
		_ = unstructured.SetNestedSlice(next.Object, webhooks, "webhooks")
		fixed := writeManifest(t, next.Object)
		mustSSA(t, 0, "explain-conflict", "-f", fixed, "--field-manager", "helm")
		out := apply(t, "", "helm", mustRead(t, fixed), false)
		got, _, _ := unstructured.NestedSlice(out.Object, "webhooks")
		hook := got[0].(map[string]any)
		if ca, _, _ := unstructured.NestedString(hook, "clientConfig", "caBundle"); ca != "bmV3" {
			t.Errorf("caBundle after the upgrade: %q, want cainjector's", ca)
		}
		if hook["timeoutSeconds"] != int64(7) {
			t.Errorf("the upgrade did not change timeoutSeconds: %v", hook["timeoutSeconds"])
		}
	})
}

func mustRead(t *testing.T, file string) string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// guestbookPort80 is a Deployment whose one container has a port named
// http, at 80.
const guestbookPort80 = `apiVersion: apps/v1
kind: Deployment
metadata: {name: guestbook}
spec:
  selector: {matchLabels: {app: guestbook}}
  template:
    metadata: {labels: {app: guestbook}}
    spec:
      containers:
      - name: ui
        image: nginx:1.27
        ports: [{name: http, containerPort: 80, protocol: TCP}]
`

// TestArgoUIPortNumberEdit: argo-cd#25474. A port's number edited in Argo
// CD's UI is another list item; the next sync merges the declared port
// back next to it, two ports named http, which the apiserver's validation
// refuses. Validation is not modelled: the prediction is not exact (exit
// 4), never a plain success, and --verify has the server say it.
func TestArgoUIPortNumberEdit(t *testing.T) {
	ns := namespace(t)
	const manifest = guestbookPort80
	apply(t, ns, "argocd-controller", manifest, true)
	if _, err := resourceFor(t, objRef("apps/v1", "Deployment", ns, "guestbook")).Patch(context.Background(), "guestbook", types.JSONPatchType,
		[]byte(`[{"op":"replace","path":"/spec/template/spec/containers/0/ports/0/containerPort","value":8080}]`), metav1.PatchOptions{FieldManager: "argocd-server"}); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "guestbook.yaml")
	writeFile(t, file, manifest)
	r := ssa(t, "explain-conflict", "-n", ns, "-f", file, "--field-manager", "argocd-controller")
	want := `two ports named "http" in .spec.template.spec.containers[name="ui"].ports: the apiserver's validation refuses duplicate port names, which is not modelled here`
	if r.code != 4 || !strings.Contains(r.stdout, "not exact: "+want+": --verify checks it") || !strings.Contains(r.stderr, want) {
		t.Errorf("exit %d, want 4:\n%s%s", r.code, r.stdout, r.stderr)
	}
	// The server refuses it: --verify resolves what was not checked here
	// with the server's refusal (exit 1: the apply fails).
	if v := ssa(t, "explain-conflict", "-n", ns, "-f", file, "--field-manager", "argocd-controller", "--verify"); v.code != 1 || !strings.Contains(v.stdout+v.stderr, `Duplicate value: "http"`) || strings.Contains(v.stderr, "kubectl-ssa bug") {
		t.Errorf("--verify: exit %d, want 1 with the server's refusal:\n%s%s", v.code, v.stdout, v.stderr)
	}
	if d := ssa(t, "diff", "-n", ns, "-f", file, "--field-manager", "argocd-controller"); d.code != 1 || !strings.Contains(d.stdout, "# not exact: "+want) {
		t.Errorf("diff: exit %d:\n%s%s", d.code, d.stdout, d.stderr)
	}
}

// TestClientSideAppliedPortNumberChange: a port's number changed in a
// manifest kubectl applied client-side. kubectl apply --server-side's
// first apply keeps client-side apply's port beside the new one, two ports
// named http, and the server refuses it before kubectl moves client-side
// apply's ownership; the end of the sequence alone would look fine. The
// prediction is not exact (exit 4), and --verify has the server refuse it
// (exit 1), not call the prediction a bug.
func TestClientSideAppliedPortNumberChange(t *testing.T) {
	ns := namespace(t)
	kubectlApply(t, ns, guestbookPort80)
	file := filepath.Join(t.TempDir(), "guestbook.yaml")
	writeFile(t, file, strings.Replace(guestbookPort80, "containerPort: 80", "containerPort: 8080", 1))
	r := ssa(t, "explain-conflict", "-n", ns, "-f", file)
	want := `not exact: kubectl's first apply, before it moves client-side apply's ownership, leaves two ports named "http" in .spec.template.spec.containers[name="ui"].ports`
	if r.code != 4 || !strings.Contains(r.stdout, want) {
		t.Errorf("exit %d, want 4 with %q:\n%s%s", r.code, want, r.stdout, r.stderr)
	}
	if v := ssa(t, "explain-conflict", "-n", ns, "-f", file, "--verify"); v.code != 1 || !strings.Contains(v.stdout+v.stderr, `Duplicate value: "http"`) || strings.Contains(v.stderr, "kubectl-ssa bug") {
		t.Errorf("--verify: exit %d, want 1 with the server's refusal:\n%s%s", v.code, v.stdout, v.stderr)
	}
}
