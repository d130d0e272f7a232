package conflict_test

import (
	"strings"
	"testing"
	"text/template"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
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
			ports[0].(map[string]any)["targetPort"] = int64(9090)
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
		if err := tmpl.Execute(&b, map[string]any{"Values": map[string]any{"replicaCount": 3, "autoscaling": map[string]any{"enabled": enabled}}}); err != nil {
			t.Fatal(err)
		}
		var got map[string]any
		if err := yaml.Unmarshal([]byte(b.String()), &got); err != nil {
			t.Fatalf("autoscaling %v renders no YAML: %v\n%s", enabled, err, b.String())
		}
		want := map[string]any{"spec": map[string]any{"replicas": float64(3)}}
		if enabled {
			want = map[string]any{"spec": nil}
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

// writerIncident: the tool's manager writes the object by op (an Apply,
// or an Update as a client-side apply records it; "" none: another
// manager made it), the HPA scales it to 5 through /scale, and the
// tool's next render sets 3.
func writerIncident(manager string, op string) incident {
	var first operation
	switch op {
	case "Apply":
		first = apply{Manager: manager, Manifest: deploymentWith("2")}
	case "Update":
		first = update{Manager: manager, Create: deploymentWith("2")}
	default:
		first = apply{Manager: "platform", Manifest: deploymentWith("2")}
	}
	return incident{manager: manager, applied: deploymentWith("3"), ops: []operation{
		first,
		update{Manager: "kube-controller-manager", Subresource: "scale", Mutate: set(int64(5), "spec", "replicas")},
	}}
}

// The fixes read how the tool writes the object now: a HelmRelease
// upgraded client-side (helm-controller's Update) gets the post-renderer
// only with spec.upgrade.serverSideApply: enabled (alone, its next
// client-side upgrade would delete replicas); Argo CD's client-side sync
// gets the annotation that migrates its entry; kustomize-controller
// applies server-side whatever its entry.
func TestToolFixesFollowTheWritersMode(t *testing.T) {
	const ssaEnabled = "  upgrade:\n    serverSideApply: enabled\n"
	const migrate = "argocd.argoproj.io/client-side-apply-migration-manager: argocd-controller"
	tests := []struct {
		manager, op string
		kind        remedy.Kind
		snippetHas  []string
		snippetNot  []string
		summaryHas  []string
		summaryNot  []string
	}{
		{manager: "helm-controller", op: "Apply", kind: remedy.FluxHelmReleaseIgnore,
			snippetHas: []string{"path: /spec/replicas"}, snippetNot: []string{"serverSideApply"},
			summaryHas: []string{"upgraded server-side", "it forces its apply"}, summaryNot: []string{"client-side now"}},
		{manager: "helm-controller", op: "Update", kind: remedy.FluxHelmReleaseIgnore,
			snippetHas: []string{"path: /spec/replicas", ssaEnabled},
			summaryHas: []string{"upgraded client-side now", "next upgrade would delete these fields", ".spec.replicas goes back to its default", "keep the two together", "its patch sets the manifest's values"},
			summaryNot: []string{"it forces its apply", "Helm SDK with server-side apply"}},
		// Not written by helm-controller yet: the setting comes along (a
		// no-op on a server-side release).
		{manager: "helm-controller", op: "", kind: remedy.FluxHelmReleaseIgnore,
			snippetHas: []string{ssaEnabled}, summaryHas: []string{"If the release is upgraded client-side"}},
		{manager: "kustomize-controller", op: "Apply", kind: remedy.FluxKustomizationIgnore,
			snippetHas: []string{"- /spec/replicas"}, summaryHas: []string{"it forces its apply"}, summaryNot: []string{"folds that entry"}},
		{manager: "kustomize-controller", op: "Update", kind: remedy.FluxKustomizationIgnore,
			snippetHas: []string{"- /spec/replicas"}, snippetNot: []string{"serverSideApply"},
			summaryHas: []string{"it forces its apply", "next apply is server-side all the same, and first folds that entry"}},
		{manager: "argocd-controller", op: "Apply", kind: remedy.ArgoCDIgnoreDifferences,
			snippetHas: []string{"ServerSideApply=true", "RespectIgnoreDifferences=true"}, snippetNot: []string{migrate},
			summaryHas: []string{"it forces its apply"}, summaryNot: []string{"client-side now"}},
		{manager: "argocd-controller", op: "Update", kind: remedy.ArgoCDIgnoreDifferences,
			snippetHas: []string{"ServerSideApply=true", "RespectIgnoreDifferences=true", migrate},
			summaryHas: []string{"syncs Deployment/shop/web client-side now", "keep it with the rest", "next write is client-side"},
			summaryNot: []string{"it forces its apply"}},
	}
	for _, tt := range tests {
		t.Run(tt.manager+" "+tt.op, func(t *testing.T) {
			r := writerIncident(tt.manager, tt.op).simulate(t)
			if string(r.ApplierOperation) != tt.op {
				t.Errorf("applier operation %q, want %q", r.ApplierOperation, tt.op)
			}
			var fix *remedy.Remedy
			rms := conflict.Resolutions(r, remedy.Target{ResourceArg: "deployment.v1.apps/web", FieldManager: tt.manager})
			for i := range rms {
				if rms[i].Kind == tt.kind {
					fix = &rms[i]
				}
			}
			if fix == nil {
				t.Fatalf("no %s fix in %+v", tt.kind, rms)
			}
			for _, s := range tt.snippetHas {
				if !strings.Contains(fix.Snippet, s) {
					t.Errorf("the snippet lacks %q:\n%s", s, fix.Snippet)
				}
			}
			for _, s := range tt.snippetNot {
				if strings.Contains(fix.Snippet, s) {
					t.Errorf("the snippet has %q:\n%s", s, fix.Snippet)
				}
			}
			for _, s := range tt.summaryHas {
				if !strings.Contains(fix.Summary, s) {
					t.Errorf("the summary lacks %q:\n%s", s, fix.Summary)
				}
			}
			for _, s := range tt.summaryNot {
				if strings.Contains(fix.Summary, s) {
					t.Errorf("the summary has %q:\n%s", s, fix.Summary)
				}
			}
		})
	}
}

// The snippet for a client-side release is the setting and the
// post-renderer together, as one HelmRelease merge.
func TestHelmReleaseFixOfAClientSideRelease(t *testing.T) {
	r := writerIncident("helm-controller", "Update").simulate(t)
	var got string
	for _, rm := range conflict.Resolutions(r, remedy.Target{FieldManager: "helm-controller"}) {
		if rm.Kind == remedy.FluxHelmReleaseIgnore {
			got = rm.Snippet
		}
	}
	want := `spec:
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
  upgrade:
    serverSideApply: enabled
`
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("snippet (-want +got)\n%s", d)
	}
}

// Helm's --take-ownership skips its ownership check only: where the
// adopted object's apply conflicts, the advice says it still fails and
// gives both flags; without conflicts, --take-ownership alone.
func TestTakeOwnershipAdvice(t *testing.T) {
	refusal := &v1alpha1.Refusal{Tool: remedy.Helm, Release: "shop-web", Namespace: "shop", Message: "exists and cannot be imported into the current release",
		Labels: map[string]string{"app.kubernetes.io/managed-by": "Helm"}}
	conflicting := hpaIncident().simulate(t)
	clean, err := conflict.Simulate(conflict.Input{Applied: manifest(t, deploymentWith("2")), FieldManager: "helm", Schema: conflict.BuiltinSchema(), HasStatus: true})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name        string
		r           *conflict.Simulation
		snippet     string
		summaryHas  []string
		metadataHas string
	}{
		{name: "a listed conflict", r: conflicting, snippet: "--take-ownership --server-side=true --force-conflicts",
			summaryHas:  []string{"--take-ownership alone is not enough", "still fails on the 1 conflict above", `.spec.replicas from "kube-controller-manager"`, "--server-side=true"},
			metadataHas: "still fails on the conflicts above"},
		{name: "no conflict", r: clean, snippet: "--take-ownership"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.r.Refused = refusal
			var take, meta *remedy.Remedy
			rms := conflict.Resolutions(tt.r, remedy.Target{ResourceArg: "deployment.v1.apps/web", FieldManager: "helm"})
			for i := range rms {
				switch rms[i].Kind {
				case remedy.HelmTakeOwnership:
					take = &rms[i]
				case remedy.HelmOwnershipMetadata:
					if meta == nil {
						meta = &rms[i]
					}
				}
			}
			if take == nil {
				t.Fatalf("no take-ownership advice in %+v", rms)
			}
			if take.Snippet != tt.snippet {
				t.Errorf("snippet %q, want %q", take.Snippet, tt.snippet)
			}
			for _, s := range tt.summaryHas {
				if !strings.Contains(take.Summary, s) {
					t.Errorf("the summary lacks %q:\n%s", s, take.Summary)
				}
			}
			if tt.summaryHas == nil && strings.Contains(take.Summary, "not enough") {
				t.Errorf("without conflicts the summary warns: %s", take.Summary)
			}
			switch {
			case meta == nil:
				t.Errorf("no ownership metadata advice in %+v", rms)
			case tt.metadataHas != "" && !strings.Contains(meta.Summary, tt.metadataHas):
				t.Errorf("the label's advice lacks %q: %s", tt.metadataHas, meta.Summary)
			case tt.metadataHas == "" && strings.Contains(meta.Summary, "still fails"):
				t.Errorf("without conflicts the label's advice warns: %s", meta.Summary)
			}
		})
	}
}
