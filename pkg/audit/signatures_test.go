package audit

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-ssa/kubectl-ssa/internal/scenario"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/pathlang"
)

// Objects of the signatures, written as the apiserver writes them: every
// create, update, patch and apply runs through its field manager.

const web = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop, labels: {app: web}}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: app
        image: nginx:1.27
        env: [{name: MODE, value: prod}]
`

const svc = `
apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec:
  selector: {app: web}
  ports: [{name: http, port: 80, protocol: TCP, targetPort: 8080}]
`

const settings = `
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: shop}
data: {x: "1", z: "2"}
`

// objectOf is what audit reads of the live object.
func objectOf(u *unstructured.Unstructured) Object {
	return Object{Ref: ownership.RefOf(u), ManagedFields: u.GetManagedFields(), Annotations: u.GetAnnotations(), Labels: u.GetLabels(), OwnerReferences: u.GetOwnerReferences()}
}

func withMeta(manifest string, meta string) string {
	return strings.Replace(manifest, "metadata: {name:", "metadata: {"+meta+"name:", 1)
}

func TestSignatures(t *testing.T) {
	yes := true
	ports := func(port int64) func(*unstructured.Unstructured) {
		return func(u *unstructured.Unstructured) {
			// Argo CD's UI sends the whole edited list: the port's key changes.
			_ = unstructured.SetNestedSlice(u.Object, []any{map[string]any{"name": "http", "port": port, "protocol": "TCP", "targetPort": int64(8080)}}, "spec", "ports")
		}
	}
	containers := func(u *unstructured.Unstructured) []any {
		c, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
		return c
	}
	setEnvAndImage := func(u *unstructured.Unstructured) {
		c := containers(u)
		app := c[0].(map[string]any)
		app["image"] = "nginx:1.28"
		app["env"] = append(app["env"].([]any), map[string]any{"name": "DEBUG", "value": "1"})
		_ = unstructured.SetNestedSlice(u.Object, c, "spec", "template", "spec", "containers")
	}
	setImage := func(u *unstructured.Unstructured) {
		c := containers(u)
		c[0].(map[string]any)["image"] = "nginx:1.28"
		_ = unstructured.SetNestedSlice(u.Object, c, "spec", "template", "spec", "containers")
	}
	owned := func(u *unstructured.Unstructured) {
		u.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "db", UID: "u", Controller: &yes}})
	}
	// A hand edit gitops applied since, with the same value.
	adoptedEdit := []scenario.Op{
		scenario.Apply{Manager: "gitops", Manifest: settings},
		scenario.Update{Manager: "kubectl-edit", Mutate: scenario.Set("3", "data", "x")},
		scenario.Apply{Manager: "gitops", Manifest: strings.Replace(settings, `x: "1"`, `x: "3"`, 1)},
	}
	tests := []struct {
		name string
		ops  []scenario.Op
		opts Options
		want []string
	}{
		// managed-fields-wiped
		{
			name: "Argo CD's tracking annotation on an object without managedFields",
			ops: []scenario.Op{
				scenario.Apply{Manager: "argocd-controller", Manifest: withMeta(settings, `annotations: {argocd.argoproj.io/tracking-id: "shop:/ConfigMap:shop/settings"}, `)},
				scenario.Update{Manager: "conversion", Mutate: scenario.ResetManagedFields},
			},
			want: []string{"managed-fields-wiped  | kubectl ssa migrate release configmap/settings -n shop --from before-first-apply"},
		},
		{
			name: "no bookkeeping: nothing says it was applied",
			ops: []scenario.Op{
				scenario.Update{Manager: "creator", Create: settings},
				scenario.Update{Manager: "conversion", Mutate: scenario.ResetManagedFields},
			},
			want: []string{},
		},
		{
			name: "managedFields after the next apply: before-first-apply, no wipe",
			ops: []scenario.Op{
				scenario.Apply{Manager: "argocd-controller", Manifest: withMeta(settings, `annotations: {argocd.argoproj.io/tracking-id: "shop:/ConfigMap:shop/settings"}, `)},
				scenario.Update{Manager: "conversion", Mutate: scenario.ResetManagedFields},
				scenario.Apply{Manager: "argocd-controller", Manifest: withMeta(settings, `annotations: {argocd.argoproj.io/tracking-id: "shop:/ConfigMap:shop/settings"}, `), Force: true},
			},
			want: []string{`before-first-apply before-first-apply .data.x .data.z .metadata.annotations["argocd.argoproj.io/tracking-id"] | kubectl ssa migrate fold configmap/settings -n shop --field-manager argocd-controller`},
		},
		{
			name: "a controller's copy of its owner's last-applied annotation is not bookkeeping",
			ops: []scenario.Op{
				scenario.Update{Manager: "kube-controller-manager", Create: withMeta(settings, `annotations: {kubectl.kubernetes.io/last-applied-configuration: "{}"}, `)},
				scenario.Update{Manager: "kube-controller-manager", Mutate: owned},
				scenario.Update{Manager: "conversion", Mutate: scenario.ResetManagedFields},
			},
			want: []string{},
		},

		// update-and-apply
		{
			name: "helm as Update (Helm 3) and as Apply (Helm 4): the fields only the Update holds",
			ops: []scenario.Op{
				scenario.Update{Manager: "helm", Create: withMeta(settings, `annotations: {legacy: "yes"}, `)},
				scenario.Apply{Manager: "helm", Manifest: settings},
			},
			want: []string{`update-and-apply helm .metadata.annotations.legacy | kubectl ssa migrate rename configmap/settings -n shop --from helm --field-manager helm`},
		},
		{
			name: "a hand edit by kubectl next to kubectl's apply is manual-edit's",
			ops: []scenario.Op{
				scenario.Apply{Manager: "kubectl", Manifest: settings},
				scenario.Update{Manager: "kubectl", Mutate: scenario.Set("3", "data", "z")},
			},
			want: []string{`manual-edit kubectl .data.z | kubectl ssa migrate rename configmap/settings -n shop --from kubectl --field-manager kubectl`},
		},

		// shared-list-items
		{
			name: "a port edited in Argo CD's UI: a new item next to the applier's list (argo-cd#25474)",
			ops: []scenario.Op{
				scenario.Apply{Manager: "argocd-controller", Manifest: svc},
				scenario.Update{Manager: "argocd-server", Mutate: ports(8081)},
			},
			want: []string{`shared-list-items argocd-server .spec.ports[port=8081,protocol="TCP"] | kubectl ssa handover service/web -n shop --field '.spec.ports[port=8081,protocol="TCP"]' --from argocd-server --to argocd-controller --mode applier`},
		},
		{
			name: "kubectl set env and image: an env item made (shared), a container's field changed (manual)",
			ops: []scenario.Op{
				scenario.Apply{Manager: "kustomize-controller", Manifest: web},
				scenario.Update{Manager: "kubectl-set", Mutate: setEnvAndImage},
			},
			want: []string{
				// the image of the applier's container: a manual edit
				`manual-edit kubectl-set .spec.template.spec.containers[name="app"].image | kubectl ssa migrate rename deployment.v1.apps/web -n shop --from kubectl-set --field-manager kustomize-controller`,
				`shared-list-items kubectl-set .spec.template.spec.containers[name="app"].env[name="DEBUG"] | kubectl ssa handover deployment.v1.apps/web -n shop --field '.spec.template.spec.containers[name="app"].env[name="DEBUG"]' --from kubectl-set --to kustomize-controller --mode applier`,
			},
		},
		{
			name: "a port added where the applier applies labels only: a manual edit",
			ops: []scenario.Op{
				scenario.Update{Manager: "creator", Create: svc},
				scenario.Apply{Manager: "labeller", Manifest: `{"apiVersion":"v1","kind":"Service","metadata":{"name":"web","namespace":"shop","labels":{"team":"a"}}}`},
				scenario.Update{Manager: "kubectl-edit", Mutate: func(u *unstructured.Unstructured) {
					p, _, _ := unstructured.NestedSlice(u.Object, "spec", "ports")
					_ = unstructured.SetNestedSlice(u.Object, append(p, map[string]any{"name": "metrics", "port": int64(9090), "protocol": "TCP"}), "spec", "ports")
				}},
			},
			want: []string{`manual-edit kubectl-edit .spec.ports[port=9090,protocol="TCP"].name | kubectl ssa migrate rename service/web -n shop --from kubectl-edit --field-manager labeller`},
		},
		{
			name: "a set-like list is a manual edit only",
			ops: []scenario.Op{
				scenario.Apply{Manager: "kustomize-controller", Manifest: settings},
				scenario.Update{Manager: "kubectl-edit", Mutate: scenario.Set([]any{"x"}, "metadata", "finalizers")},
			},
			want: []string{`manual-edit kubectl-edit .metadata.finalizers[="x"] | kubectl ssa migrate rename configmap/settings -n shop --from kubectl-edit --field-manager kustomize-controller`},
		},

		// adopted edits
		{
			name: "a hand edit the applier applied since: no manual edit",
			ops:  adoptedEdit,
			want: []string{},
		},
		{
			name: "nor drift",
			ops:  adoptedEdit,
			opts: Options{Expect: []string{"gitops"}},
			want: []string{},
		},
		{
			name: "--rules=+adopted-edit names it, as history",
			ops:  adoptedEdit,
			opts: Options{Expect: []string{"gitops"}, Rules: map[v1alpha1.Code]bool{v1alpha1.CodeAdoptedEdit: true}},
			want: []string{`adopted-edit kubectl-edit .data.x | kubectl ssa handover release configmap/settings -n shop --from kubectl-edit --all`},
		},
		{
			name: "half adopted: the other half is still an edit",
			ops: []scenario.Op{
				scenario.Apply{Manager: "gitops", Manifest: settings},
				scenario.Update{Manager: "kubectl-edit", Mutate: func(u *unstructured.Unstructured) {
					scenario.Set("3", "data", "x")(u)
					scenario.Set("4", "data", "z")(u)
				}},
				scenario.Apply{Manager: "gitops", Manifest: strings.Replace(settings, `x: "1", z: "2"`, `x: "3"`, 1)},
			},
			opts: Options{Rules: map[v1alpha1.Code]bool{v1alpha1.CodeAdoptedEdit: true}},
			want: []string{`manual-edit kubectl-edit .data.z | kubectl ssa migrate rename configmap/settings -n shop --from kubectl-edit --field-manager gitops`},
		},

		// controller-scope
		{
			name: "kube-controller-manager's name on an image of an applied Deployment",
			ops: []scenario.Op{
				scenario.Apply{Manager: "argocd-controller", Manifest: web},
				scenario.Update{Manager: "kube-controller-manager", Mutate: setImage},
				scenario.Update{Manager: "kube-controller-manager", Mutate: scenario.Set("3", "metadata", "annotations", "deployment.kubernetes.io/revision")},
			},
			want: []string{`controller-scope kube-controller-manager .spec.template.spec.containers[name="app"].image | kubectl ssa handover deployment.v1.apps/web -n shop --field '.spec.template.spec.containers[name="app"].image' --from kube-controller-manager --to argocd-controller --mode applier`},
		},
		{
			name: "replicas written by an old server's autoscaler, metadata and status are its own",
			ops: []scenario.Op{
				scenario.Apply{Manager: "argocd-controller", Manifest: strings.Replace(web, "  replicas: 2\n", "", 1)},
				scenario.Update{Manager: "kube-controller-manager", Mutate: scenario.Set(int64(5), "spec", "replicas")},
				scenario.Update{Manager: "kube-controller-manager", Mutate: scenario.Set([]any{"foregroundDeletion"}, "metadata", "finalizers")},
			},
			want: []string{},
		},
		{
			name: "an object its controller made is the controller's to write",
			ops: []scenario.Op{
				scenario.Apply{Manager: "argocd-controller", Manifest: web},
				scenario.Update{Manager: "kube-controller-manager", Mutate: func(u *unstructured.Unstructured) { owned(u); setImage(u) }},
			},
			want: []string{},
		},

		// imperative (optional)
		{
			name: "kubectl create: nothing by default",
			ops:  []scenario.Op{scenario.Update{Manager: "kubectl-create", Create: web}},
			want: []string{},
		},
		{
			name: "kubectl create with --rules=+imperative",
			ops:  []scenario.Op{scenario.Update{Manager: "kubectl-create", Create: settings}},
			opts: Options{Rules: map[v1alpha1.Code]bool{v1alpha1.CodeImperative: true}},
			want: []string{`imperative kubectl-create .data.x .data.z | kubectl ssa extract configmap/settings -n shop --manager kubectl-create`},
		},
		{
			name: "kubectl create, then applied: not imperative any more",
			ops: []scenario.Op{
				scenario.Update{Manager: "kubectl-create", Create: settings},
				scenario.Apply{Manager: "gitops", Manifest: settings},
			},
			opts: Options{Rules: map[v1alpha1.Code]bool{v1alpha1.CodeImperative: true}},
			want: []string{},
		},

		// rules
		{
			name: "--rules=-manual-edit leaves manual edits out",
			ops: []scenario.Op{
				scenario.Apply{Manager: "gitops", Manifest: settings},
				scenario.Update{Manager: "kubectl-edit", Mutate: scenario.Set("3", "data", "x")},
			},
			opts: Options{Rules: map[v1alpha1.Code]bool{v1alpha1.CodeManualEdit: false}},
			want: []string{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := (&scenario.State{}).Run(t, tt.ops...)
			fs := Check(objectOf(s.Live), tt.opts)
			if diff := cmp.Diff(tt.want, got(fs)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// The evidence of each signature, as data: which bookkeeping says who
// applies a wiped object (never the last-applied annotation's content),
// both entries of one manager, the list a hand edit shares, the rule a
// component broke.
func TestSignatureEvidence(t *testing.T) {
	wipe := scenario.Update{Manager: "conversion", Mutate: scenario.ResetManagedFields}
	type want struct {
		code      v1alpha1.Code
		manager   string
		evidence  v1alpha1.Evidence
		shared    []string
		reference string
	}
	tests := []struct {
		name string
		ops  []scenario.Op
		want want
	}{
		{
			name: "a Helm release's object: Helm applies it",
			ops: []scenario.Op{
				scenario.Apply{Manager: "helm", Manifest: withMeta(settings, `labels: {app.kubernetes.io/managed-by: Helm}, annotations: {meta.helm.sh/release-name: shop, kubectl.kubernetes.io/last-applied-configuration: '{"data":{"password":"hunter2"}}'}, `)},
				wipe,
			},
			want: want{code: v1alpha1.CodeManagedFieldsWiped, reference: "https://github.com/kubernetes/kubernetes/issues/136919", evidence: v1alpha1.Evidence{Applier: "helm", Bookkeeping: []v1alpha1.Mark{
				{Kind: v1alpha1.MarkAnnotation, Key: "meta.helm.sh/release-name", Value: "shop", Tool: "Helm"},
				{Kind: v1alpha1.MarkLabel, Key: "app.kubernetes.io/managed-by", Value: "Helm", Tool: "Helm"},
				{Kind: v1alpha1.MarkAnnotation, Key: ownership.LastAppliedAnnotation, Tool: "kubectl apply"},
			}}},
		},
		{
			name: "a chart Flux's helm-controller installed: Flux applies it",
			ops: []scenario.Op{
				scenario.Apply{Manager: "helm-controller", Manifest: withMeta(settings, `labels: {helm.toolkit.fluxcd.io/name: shop, app.kubernetes.io/managed-by: Helm}, annotations: {meta.helm.sh/release-name: shop}, `)},
				wipe,
			},
			want: want{code: v1alpha1.CodeManagedFieldsWiped, reference: "https://github.com/kubernetes/kubernetes/issues/136919", evidence: v1alpha1.Evidence{Applier: "helm-controller", Bookkeeping: []v1alpha1.Mark{
				{Kind: v1alpha1.MarkLabel, Key: "helm.toolkit.fluxcd.io/name", Value: "shop", Tool: "Flux"},
				{Kind: v1alpha1.MarkAnnotation, Key: "meta.helm.sh/release-name", Value: "shop", Tool: "Helm"},
				{Kind: v1alpha1.MarkLabel, Key: "app.kubernetes.io/managed-by", Value: "Helm", Tool: "Helm"},
			}}},
		},
		{
			name: "a Flux Kustomization's object",
			ops: []scenario.Op{
				scenario.Apply{Manager: "kustomize-controller", Manifest: withMeta(settings, `labels: {kustomize.toolkit.fluxcd.io/name: apps}, `)},
				wipe,
			},
			want: want{code: v1alpha1.CodeManagedFieldsWiped, reference: "https://github.com/kubernetes/kubernetes/issues/136919", evidence: v1alpha1.Evidence{Applier: "kustomize-controller", Bookkeeping: []v1alpha1.Mark{
				{Kind: v1alpha1.MarkLabel, Key: "kustomize.toolkit.fluxcd.io/name", Value: "apps", Tool: "Flux"},
			}}},
		},
		{
			name: "helm's two entries, the fields each holds",
			ops: []scenario.Op{
				scenario.Update{Manager: "helm", Create: withMeta(settings, `annotations: {legacy: "yes"}, `)},
				scenario.Apply{Manager: "helm", Manifest: settings},
			},
			want: want{code: v1alpha1.CodeUpdateAndApply, manager: "helm", reference: "https://github.com/helm/helm/issues/31516", evidence: v1alpha1.Evidence{
				Entries: []v1alpha1.EntryRef{{Manager: "helm", Operation: "Update", APIVersion: "v1", Fields: 3}, {Manager: "helm", Operation: "Apply", APIVersion: "v1", Fields: 2}},
				Shared:  paths(t, ".data.x", ".data.z"),
			}},
		},
		{
			name: "Argo CD's UI and Argo CD's applier share the ports",
			ops: []scenario.Op{
				scenario.Apply{Manager: "argocd-controller", Manifest: svc},
				scenario.Update{Manager: "argocd-server", Mutate: func(u *unstructured.Unstructured) {
					_ = unstructured.SetNestedSlice(u.Object, []any{map[string]any{"name": "http", "port": int64(8081), "protocol": "TCP", "targetPort": int64(8080)}}, "spec", "ports")
				}},
			},
			want: want{code: v1alpha1.CodeSharedListItems, manager: "argocd-server", shared: []string{"argocd-controller"}, reference: "https://github.com/argoproj/argo-cd/issues/25474", evidence: v1alpha1.Evidence{
				// (the edit's port came with its name and targetPort; the
				// applier lost its port, and applies the selector)
				Entries: []v1alpha1.EntryRef{{Manager: "argocd-server", Operation: "Update", APIVersion: "v1", Fields: 2}, {Manager: "argocd-controller", Operation: "Apply", APIVersion: "v1", Fields: 1}},
				List:    paths(t, ".spec.ports")[0],
			}},
		},
		{
			name: "the rule kube-controller-manager broke",
			ops: []scenario.Op{
				scenario.Apply{Manager: "gitops", Manifest: web},
				scenario.Update{Manager: "kube-controller-manager", Mutate: scenario.Set(true, "spec", "paused")},
			},
			want: want{code: v1alpha1.CodeControllerScope, manager: "kube-controller-manager", evidence: v1alpha1.Evidence{
				Entries: []v1alpha1.EntryRef{{Manager: "kube-controller-manager", Operation: "Update", APIVersion: "apps/v1", Fields: 1}},
				Rule:    componentRules["kube-controller-manager"],
			}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := (&scenario.State{}).Run(t, tt.ops...)
			fs := Check(objectOf(s.Live), Options{})
			var f *v1alpha1.Finding
			for i := range fs {
				if fs[i].Code == tt.want.code {
					f = &fs[i]
				}
			}
			if f == nil {
				t.Fatalf("no %s in %v", tt.want.code, got(fs))
			}
			if f.Evidence == nil {
				t.Fatalf("%s has no evidence", f.Code)
			}
			ev := *f.Evidence
			for i := range ev.Entries {
				ev.Entries[i].Time = nil // (the field manager's clock)
			}
			if diff := cmp.Diff(tt.want.evidence, ev); diff != "" {
				t.Errorf("evidence (-want +got):\n%s", diff)
			}
			if f.Manager != tt.want.manager || f.Reference != tt.want.reference || !cmp.Equal(f.SharedWith, tt.want.shared) {
				t.Errorf("manager %q reference %q sharedWith %v", f.Manager, f.Reference, f.SharedWith)
			}
			if f.Severity != v1alpha1.SeverityWarning || f.Message == "" || strings.Contains(f.Message, "hunter2") {
				t.Errorf("severity %s, message %q", f.Severity, f.Message)
			}
		})
	}
}

// The fix of shared list items hands them to the applier only: released,
// an item the edit made would stay next to the applier's own.
func TestSharedListItemsFixes(t *testing.T) {
	s := (&scenario.State{}).Run(t,
		scenario.Apply{Manager: "argocd-controller", Manifest: svc},
		scenario.Apply{Manager: "platform", Manifest: `{"apiVersion":"v1","kind":"Service","metadata":{"name":"web","namespace":"shop"},"spec":{"type":"ClusterIP"}}`},
		scenario.Update{Manager: "kubectl-edit", Mutate: func(u *unstructured.Unstructured) {
			p, _, _ := unstructured.NestedSlice(u.Object, "spec", "ports")
			p = append(p, map[string]any{"name": "metrics", "port": int64(9090), "protocol": "TCP"})
			_ = unstructured.SetNestedSlice(u.Object, p, "spec", "ports")
		}},
	)
	for _, mode := range []v1alpha1.FixMode{v1alpha1.FixAdopt, v1alpha1.FixForget} {
		fs := Check(objectOf(s.Live), Options{Fix: mode})
		if len(fs) != 1 || fs[0].Code != v1alpha1.CodeSharedListItems || len(fs[0].Fixes) != 1 || fs[0].Fixes[0].Mode != v1alpha1.FixAdopt {
			t.Fatalf("--fix %s: %+v", mode, fs)
		}
		// Two appliers: the user names the one that takes the item.
		if want := `kubectl ssa handover service/web -n shop --field '.spec.ports[port=9090,protocol="TCP"]' --from kubectl-edit --to APPLIER --mode applier`; fs[0].Fix.String() != want {
			t.Errorf("fix %s, want %s", fs[0].Fix, want)
		}
		if want := []string{"argocd-controller", "platform"}; !cmp.Equal(fs[0].SharedWith, want) {
			t.Errorf("sharedWith %v", fs[0].SharedWith)
		}
	}
}

func TestParseRules(t *testing.T) {
	tests := []struct {
		in   []string
		want map[v1alpha1.Code]bool
		err  string
	}{
		{in: nil, want: map[v1alpha1.Code]bool{}},
		{in: []string{"+imperative", " -rollout-restart"}, want: map[v1alpha1.Code]bool{v1alpha1.CodeImperative: true, v1alpha1.CodeRolloutRestart: false}},
		{in: []string{"imperative"}, err: `"imperative": start each rule with + (turn it on) or - (turn it off): --rules=+imperative`},
		{in: []string{"+adopted-edits"}, err: `"+adopted-edits": no finding is called "adopted-edits"; the rules are the findings' codes: drift, `},
		{in: []string{"+drift", "-drift"}, err: `"-drift": drift is turned both on and off`},
	}
	for _, tt := range tests {
		got, err := ParseRules(tt.in)
		if tt.err != "" {
			if err == nil || !strings.HasPrefix(err.Error(), tt.err) {
				t.Errorf("%v: error %v, want %s", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || !cmp.Equal(got, tt.want) {
			t.Errorf("%v: %v %v", tt.in, got, err)
		}
	}
	if (Options{}).Enabled(v1alpha1.CodeImperative) || !(Options{}).Enabled(v1alpha1.CodeDrift) || (Options{Rules: map[v1alpha1.Code]bool{v1alpha1.CodeDrift: false}}).Enabled(v1alpha1.CodeDrift) {
		t.Error("defaults: the optional codes off, the others on")
	}
}

func paths(t *testing.T, ss ...string) []pathlang.Path {
	t.Helper()
	var out []pathlang.Path
	for _, s := range ss {
		p, err := pathlang.ParsePath(s)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, pathlang.Path(p))
	}
	return out
}
