package conflict_test

import (
	"strings"
	"testing"
	"text/template"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/conflict"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/remedy"
)

// incident is an object, the writes that made it, and the apply whose
// conflicts the tools' fixes are for.
type incident struct {
	ops     []operation
	applied string
	manager string
}

func (c incident) simulate(t *testing.T) *conflict.Simulation {
	t.Helper()
	s := (&state{}).Run(t, c.ops...)
	applied := manifest(t, c.applied)
	r, err := conflict.Simulate(conflict.Input{Live: s.Live, Applied: applied, FieldManager: c.manager, Schema: conflict.BuiltinSchema(), HasStatus: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Conflicts) == 0 {
		t.Fatal("the incident does not conflict")
	}
	r.Applied = applied
	return r
}

const helmDeployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
  annotations: {meta.helm.sh/release-name: shop-web, meta.helm.sh/release-namespace: shop}
spec:
  replicas: %d
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: nginx}]
`

func deploymentWith(replicas string) string {
	return strings.Replace(helmDeployment, "%d", replicas, 1)
}

// hpaIncident: Helm 4 installs with 2 replicas, the HPA scales to 5, the
// upgrade renders 3.
func hpaIncident() incident {
	return incident{manager: "helm", applied: deploymentWith("3"), ops: []operation{
		apply{Manager: "helm", Manifest: deploymentWith("2")},
		update{Manager: "kube-controller-manager", Subresource: "scale", Mutate: set(int64(5), "spec", "replicas")},
	}}
}

const webhook = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: shop-hooks
  annotations: {cert-manager.io/inject-ca-from: shop/serving}
webhooks:
- name: check.shop.example.com
  admissionReviewVersions: [v1]
  sideEffects: None
  clientConfig:
    caBundle: %s
    service: {name: hooks, namespace: shop}
`

func webhookWith(ca string) string { return strings.Replace(webhook, "%s", ca, 1) }

const argoService = `apiVersion: v1
kind: Service
metadata:
  name: web.v1
  namespace: shop
  labels: {app.kubernetes.io/name: web}
spec:
  ports: [{name: http, port: 80, protocol: TCP, targetPort: 8080}]
`

// The incidents of the year, each fixed in every tool's terms: the
// snippets name the object, the paths and the owners, and leave the
// fields to their owners.
func TestToolFixes(t *testing.T) {
	hpa := hpaIncident()
	caBundle := incident{manager: "helm", applied: webhookWith("b2xk"), ops: []operation{
		apply{Manager: "helm", Manifest: webhookWith("b2xk")},
		apply{Manager: "cert-manager-cainjector", Force: true, Manifest: `{"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration", "metadata": {"name": "shop-hooks"},
			"webhooks": [{"name": "check.shop.example.com", "clientConfig": {"caBundle": "bmV3"}}]}`},
	}}
	uiEdit := incident{manager: "argocd-controller", applied: argoService, ops: []operation{
		apply{Manager: "argocd-controller", Manifest: argoService},
		update{Manager: "argocd-server", Mutate: func(u *unstructured.Unstructured) {
			ports, _, _ := unstructured.NestedSlice(u.Object, "spec", "ports")
			ports[0].(map[string]interface{})["targetPort"] = int64(9090)
			_ = unstructured.SetNestedSlice(u.Object, ports, "spec", "ports")
		}},
		update{Manager: "kubectl-label", Mutate: set("shop", "metadata", "labels", "app.kubernetes.io/name")},
	}}
	tests := []struct {
		name     string
		incident incident
		tool     remedy.Tool // --for; "" infers it from the manager
		want     map[remedy.Kind]string
	}{
		{name: "HPA replicas, Argo CD", incident: hpa, tool: remedy.ArgoCD, want: map[remedy.Kind]string{
			remedy.ArgoCDIgnoreDifferences: `spec:
  ignoreDifferences:
  - group: apps
    kind: Deployment
    managedFieldsManagers:
    - kube-controller-manager
    name: web
    namespace: shop
  syncPolicy:
    syncOptions:
    - ServerSideApply=true
    - RespectIgnoreDifferences=true
`}},
		{name: "HPA replicas, Flux", incident: hpa, tool: remedy.Flux, want: map[remedy.Kind]string{
			remedy.FluxKustomizationIgnore: `spec:
  ignore:
  - paths:
    - /spec/replicas
    target:
      group: apps
      kind: Deployment
      name: web
      namespace: shop
`,
			remedy.FluxHelmReleaseIgnore: `spec:
  driftDetection:
    ignore:
    - paths:
      - /spec/replicas
      target:
        group: apps
        kind: Deployment
        name: web
        namespace: shop
  postRenderers:
  - kustomize:
      patches:
      - patch: |
          - op: remove
            path: /spec/replicas
        target:
          group: apps
          kind: Deployment
          name: web
`}},
		{name: "HPA replicas, Helm", incident: hpa, want: map[remedy.Kind]string{
			remedy.HelmChart: `spec:
  {{- if not .Values.autoscaling.enabled }}
  replicas: {{ .Values.replicaCount }}
  {{- end }}
`,
			remedy.HelmForce: "--server-side=true --force-conflicts"}},
		{name: "injected caBundle, Helm", incident: caBundle, want: map[remedy.Kind]string{
			remedy.HelmChart: `webhooks:
  - name: check.shop.example.com
    clientConfig:
      caBundle: ...
`,
			remedy.HelmForce: "--server-side=true --force-conflicts"}},
		{name: "injected caBundle, Argo CD", incident: caBundle, tool: remedy.ArgoCD, want: map[remedy.Kind]string{
			remedy.ArgoCDIgnoreDifferences: `spec:
  ignoreDifferences:
  - group: admissionregistration.k8s.io
    kind: ValidatingWebhookConfiguration
    managedFieldsManagers:
    - cert-manager-cainjector
    name: shop-hooks
  syncPolicy:
    syncOptions:
    - ServerSideApply=true
    - RespectIgnoreDifferences=true
`}},
		{name: "injected caBundle, Flux", incident: caBundle, tool: remedy.Flux, want: map[remedy.Kind]string{
			remedy.FluxKustomizationIgnore: `spec:
  ignore:
  - paths:
    - /webhooks/0/clientConfig/caBundle
    target:
      group: admissionregistration\.k8s\.io
      kind: ValidatingWebhookConfiguration
      name: shop-hooks
`,
			remedy.FluxHelmReleaseIgnore: `spec:
  driftDetection:
    ignore:
    - paths:
      - /webhooks/0/clientConfig/caBundle
      target:
        group: admissionregistration\.k8s\.io
        kind: ValidatingWebhookConfiguration
        name: shop-hooks
  postRenderers:
  - kustomize:
      patches:
      - patch: |
          - op: remove
            path: /webhooks/0/clientConfig/caBundle
        target:
          group: admissionregistration\.k8s\.io
          kind: ValidatingWebhookConfiguration
          name: shop-hooks
`}},
		// A UI edit and a kubectl label are people's: their paths, by
		// key and quoted, not their managers.
		{name: "UI edit and a label, Argo CD", incident: uiEdit, want: map[remedy.Kind]string{
			remedy.ArgoCDIgnoreDifferences: `spec:
  ignoreDifferences:
  - group: ""
    jqPathExpressions:
    - .metadata.labels["app.kubernetes.io/name"]
    - .spec.ports[] | select(.port == 80 and .protocol == "TCP") | .targetPort
    kind: Service
    name: web.v1
    namespace: shop
  syncPolicy:
    syncOptions:
    - ServerSideApply=true
    - RespectIgnoreDifferences=true
`}},
		{name: "UI edit and a label, Flux", incident: uiEdit, tool: remedy.Flux, want: map[remedy.Kind]string{
			remedy.FluxKustomizationIgnore: `spec:
  ignore:
  - paths:
    - /metadata/labels/app.kubernetes.io~1name
    - /spec/ports/0/targetPort
    target:
      kind: Service
      name: web\.v1
      namespace: shop
`,
			remedy.FluxHelmReleaseIgnore: `spec:
  driftDetection:
    ignore:
    - paths:
      - /metadata/labels/app.kubernetes.io~1name
      - /spec/ports/0/targetPort
      target:
        kind: Service
        name: web\.v1
        namespace: shop
  postRenderers:
  - kustomize:
      patches:
      - patch: |
          - op: remove
            path: /metadata/labels/app.kubernetes.io~1name
          - op: remove
            path: /spec/ports/0/targetPort
        target:
          kind: Service
          name: web\.v1
`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.incident.simulate(t)
			got := map[remedy.Kind]string{}
			for _, rm := range conflict.Resolutions(r, remedy.Target{ResourceArg: "x/y", FieldManager: tt.incident.manager, Tool: tt.tool}) {
				if rm.Tool == "" {
					continue
				}
				got[rm.Kind] = rm.Snippet
				if rm.Into == nil || rm.Summary == "" {
					t.Errorf("%s: no summary or no place for the snippet: %+v", rm.Kind, rm)
				}
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("snippets (-want +got)\n%s", d)
			}
		})
	}
}

// The chart change renders as Helm renders it (Go templates): without
// autoscaling, the chart's replicas; with it, none.
func TestHelmReplicasTemplate(t *testing.T) {
	r := hpaIncident().simulate(t)
	var snippet string
	for _, rm := range conflict.Resolutions(r, remedy.Target{FieldManager: "helm"}) {
		if rm.Kind == remedy.HelmChart {
			snippet = rm.Snippet
		}
	}
	tmpl, err := template.New("deployment").Parse(snippet)
	if err != nil {
		t.Fatalf("the snippet is not a template: %v\n%s", err, snippet)
	}
	for _, enabled := range []bool{false, true} {
		var b strings.Builder
		if err := tmpl.Execute(&b, map[string]interface{}{"Values": map[string]interface{}{"replicaCount": 3, "autoscaling": map[string]interface{}{"enabled": enabled}}}); err != nil {
			t.Fatal(err)
		}
		var got map[string]interface{}
		if err := yaml.Unmarshal([]byte(b.String()), &got); err != nil {
			t.Fatalf("autoscaling %v renders no YAML: %v\n%s", enabled, err, b.String())
		}
		want := map[string]interface{}{"spec": map[string]interface{}{"replicas": float64(3)}}
		if enabled {
			want = map[string]interface{}{"spec": nil}
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("autoscaling %v (-want +got)\n%s", enabled, d)
		}
	}
}

// The force of an apply to /scale has no kubectl command: the server
// takes only a Scale there, which kubectl apply can't send (it answers
// "invalid object type" for the object's own kind, and can't map Scale).
// To /status, and to the object, kubectl's force is the command.
func TestForceCommandOfASubresourceApply(t *testing.T) {
	r := hpaIncident().simulate(t)
	for _, sub := range []string{"", "status", "scale"} {
		var force *remedy.Remedy
		rms := conflict.Resolutions(r, remedy.Target{ResourceArg: "deployment.v1.apps/web", FieldManager: "platform", Subresource: sub, File: "m.yaml"})
		for i := range rms {
			if rms[i].Kind == remedy.Force {
				force = &rms[i]
			}
		}
		if force == nil {
			t.Fatalf("subresource %q: no force remedy in %+v", sub, rms)
		}
		switch got := force.Command.String(); {
		case sub == "scale" && got != "":
			t.Errorf("an apply to /scale: force command %q, want none (kubectl can't apply there)", got)
		case sub == "scale" && !strings.Contains(force.Summary, "kubectl can't apply to /scale"):
			t.Errorf("an apply to /scale: the summary does not say why there is no command: %q", force.Summary)
		case sub != "scale" && !strings.Contains(got, "kubectl apply --server-side --force-conflicts"):
			t.Errorf("subresource %q: force command %q", sub, got)
		}
	}
}
