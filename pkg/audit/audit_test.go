package audit

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-ssa/kubectl-ssa/internal/scenario"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
)

// entry is a managedFields entry written by hand: the rules' table
// (TestCheck) is of minimal entries, some of them odd (empty, at an
// unknown apiVersion); the objects of the signatures are built
// (signatures_test.go).
func entry(manager string, op metav1.ManagedFieldsOperationType, sub, fields string) metav1.ManagedFieldsEntry {
	return metav1.ManagedFieldsEntry{Manager: manager, Operation: op, Subresource: sub, APIVersion: "v1", FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(fields)}
}

const (
	apply  = metav1.ManagedFieldsOperationApply
	update = metav1.ManagedFieldsOperationUpdate
)

// got is a finding as the tests compare them.
func got(fs []v1alpha1.Finding) []string {
	out := []string{}
	for _, f := range fs {
		s := string(f.Code) + " " + f.Manager
		for _, p := range f.Paths {
			s += " " + p.String()
		}
		out = append(out, s+" | "+f.Fix.String())
	}
	return out
}

func TestCheck(t *testing.T) {
	ref := v1alpha1.ObjectRef{APIVersion: "v1", Kind: "ConfigMap", Namespace: "shop", Name: "web"}
	yes := true
	tests := []struct {
		name    string
		entries []metav1.ManagedFieldsEntry
		ann     map[string]string
		refs    []metav1.OwnerReference
		opts    Options
		want    []string
	}{
		{
			name:    "clean",
			entries: []metav1.ManagedFieldsEntry{entry("argocd-controller", apply, "", `{"f:data":{"f:x":{}}}`)},
			want:    []string{},
		},
		{
			name:    "an entry that owns nothing",
			entries: []metav1.ManagedFieldsEntry{entry("old-tool", update, "", `{}`)},
			want:    []string{"empty-manager old-tool | kubectl ssa migrate release configmap/web -n shop --from old-tool"},
		},
		{
			name:    "a manual edit, with the connection flags in the fix",
			entries: []metav1.ManagedFieldsEntry{entry("kubectl-edit", update, "", `{"f:data":{"f:x":{}}}`)},
			opts:    Options{ClusterFlags: []string{"--context=prod"}},
			want:    []string{"manual-edit kubectl-edit .data.x | kubectl ssa handover release configmap/web --context=prod -n shop --from kubectl-edit --all"},
		},
		{
			// (The HPA writes /scale as kube-controller-manager.)
			name: "drift: others' fields of the main resource, not controllers' subresources, system managers or allowed ones",
			entries: []metav1.ManagedFieldsEntry{
				entry("argocd-controller", apply, "", `{"f:data":{"f:x":{}}}`),
				entry("kubectl-edit", update, "", `{"f:data":{"f:y":{}}}`),
				entry("kube-controller-manager", update, "scale", `{"f:spec":{"f:replicas":{}}}`),
				entry("keda-operator", update, "scale", `{"f:spec":{"f:replicas":{}}}`),
				entry("kubelet", update, "status", `{"f:status":{"f:phase":{}}}`),
				entry("kube-controller-manager", update, "", `{"f:metadata":{"f:finalizers":{}}}`),
				entry("istio", update, "", `{"f:metadata":{"f:labels":{"f:mesh":{}}}}`),
			},
			opts: Options{Expect: []string{"argocd-*"}, Allow: []string{"ist?o"}},
			// The default fix returns the object to its declared state:
			// the expected applier adopts the fields.
			want: []string{"drift kubectl-edit .data.y | kubectl ssa migrate rename configmap/web -n shop --from kubectl-edit --field-manager argocd-controller"},
		},
		{
			// Plain audit reports it as a manual edit; stricter checking
			// must not report less.
			name: "drift: a hand kubectl scale, through /scale",
			entries: []metav1.ManagedFieldsEntry{
				entry("argocd-controller", apply, "", `{"f:data":{"f:x":{}}}`),
				entry("kubectl", update, "scale", `{"f:spec":{"f:replicas":{}}}`),
				entry("k9s", update, "scale", `{"f:spec":{"f:replicas":{}}}`),
			},
			opts: Options{Expect: []string{"argocd-controller"}},
			want: []string{
				"drift kubectl .spec.replicas | kubectl ssa handover configmap/web -n shop --field .spec.replicas --from kubectl --from-subresource scale --to argocd-controller --mode applier",
				"drift k9s .spec.replicas | kubectl ssa handover configmap/web -n shop --field .spec.replicas --from k9s --from-subresource scale --to argocd-controller --mode applier",
			},
		},
		{
			name: "a hand kubectl scale of an allowed manager is no drift",
			entries: []metav1.ManagedFieldsEntry{
				entry("argocd-controller", apply, "", `{"f:data":{"f:x":{}}}`),
				entry("kubectl", update, "scale", `{"f:spec":{"f:replicas":{}}}`),
			},
			opts: Options{Expect: []string{"argocd-controller"}, Allow: []string{"kubectl"}},
			want: []string{},
		},
		{
			name: "drift with no expected applier on the object: forget is the only fix",
			entries: []metav1.ManagedFieldsEntry{
				entry("helm", apply, "", `{"f:data":{"f:x":{}}}`),
				entry("kubectl-edit", update, "", `{"f:data":{"f:y":{}}}`),
			},
			opts: Options{Expect: []string{"argocd-*"}},
			want: []string{
				"drift helm .data.x | kubectl ssa handover release configmap/web -n shop --from helm --all",
				"drift kubectl-edit .data.y | kubectl ssa handover release configmap/web -n shop --from kubectl-edit --all",
			},
		},
		{
			name: "the edit took all of the expected applier's fields: it adopts them by name",
			entries: []metav1.ManagedFieldsEntry{
				entry("kubectl-edit", update, "", `{"f:data":{"f:x":{}}}`),
			},
			opts: Options{Expect: []string{"argocd-controller"}},
			want: []string{"drift kubectl-edit .data.x | kubectl ssa migrate rename configmap/web -n shop --from kubectl-edit --field-manager argocd-controller"},
		},
		{
			// Adopting them would give replicas back to gitops, undoing
			// the handover to the autoscaler.
			name: "a handover's temporary manager is no drift",
			entries: []metav1.ManagedFieldsEntry{
				entry("gitops", apply, "", `{"f:data":{"f:x":{}}}`),
				entry("kubectl-ssa-handover", apply, "", `{"f:spec":{"f:replicas":{}}}`),
			},
			opts: Options{Expect: []string{"gitops"}},
			want: []string{"handover-held kubectl-ssa-handover .spec.replicas | "},
		},
		{
			name: "a manual edit of an applied object: its applier adopts it",
			entries: []metav1.ManagedFieldsEntry{
				entry("gitops", apply, "", `{"f:data":{"f:x":{}}}`),
				entry("kubectl-patch", update, "", `{"f:data":{"f:y":{}}}`),
			},
			want: []string{"manual-edit kubectl-patch .data.y | kubectl ssa migrate rename configmap/web -n shop --from kubectl-patch --field-manager gitops"},
		},
		{
			name: "kubectl rollout restart's stamp is history, not an edit nor drift",
			entries: []metav1.ManagedFieldsEntry{
				entry("gitops", apply, "", `{"f:spec":{"f:template":{"f:spec":{"f:x":{}}}}}`),
				entry("kubectl-rollout", update, "", `{"f:spec":{"f:template":{"f:metadata":{"f:annotations":{".":{},"f:kubectl.kubernetes.io/restartedAt":{}}}}}}`),
			},
			opts: Options{Expect: []string{"gitops"}},
			want: []string{`rollout-restart kubectl-rollout .spec.template.metadata.annotations["kubectl.kubernetes.io/restartedAt"] | `},
		},
		{
			// The deployment controller copies the template, stamp
			// included, into the new ReplicaSet: reported once, on the
			// Deployment (issue 35).
			name: "a ReplicaSet's copy of a restart stamp is not a restart",
			entries: []metav1.ManagedFieldsEntry{
				entry("kube-controller-manager", update, "", `{"f:metadata":{"f:ownerReferences":{}},"f:spec":{"f:template":{"f:metadata":{"f:annotations":{".":{},"f:kubectl.kubernetes.io/restartedAt":{}}}}}}`),
			},
			refs: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", Controller: &yes}},
			want: []string{},
		},
		{
			name: "a restart stamped by hand on an object a controller owns is reported",
			entries: []metav1.ManagedFieldsEntry{
				entry("kubectl-rollout", update, "", `{"f:spec":{"f:template":{"f:metadata":{"f:annotations":{".":{},"f:kubectl.kubernetes.io/restartedAt":{}}}}}}`),
			},
			refs: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", Controller: &yes}},
			want: []string{`rollout-restart kubectl-rollout .spec.template.metadata.annotations["kubectl.kubernetes.io/restartedAt"] | `},
		},
		{
			name: "a restart and a hand edit of the pod template",
			entries: []metav1.ManagedFieldsEntry{
				entry("gitops", apply, "", `{"f:spec":{"f:template":{"f:spec":{"f:x":{}}}}}`),
				entry("kubectl-rollout", update, "", `{"f:spec":{"f:template":{"f:metadata":{"f:annotations":{".":{},"f:kubectl.kubernetes.io/restartedAt":{}}},"f:spec":{"f:y":{}}}}}`),
			},
			want: []string{
				`rollout-restart kubectl-rollout .spec.template.metadata.annotations["kubectl.kubernetes.io/restartedAt"] | `,
				// (Not migrate rename: that would give gitops the stamp too.)
				"manual-edit kubectl-rollout .spec.template.spec.y | kubectl ssa handover configmap/web -n shop --field .spec.template.spec.y --from kubectl-rollout --to gitops --mode applier",
			},
		},
		{
			name:    "generic manager",
			entries: []metav1.ManagedFieldsEntry{entry("Go-http-client", update, "", `{"f:data":{"f:x":{}}}`)},
			want:    []string{"generic-manager Go-http-client | kubectl ssa migrate rename configmap/web -n shop --from Go-http-client --field-manager NEW-NAME"},
		},
		{
			name:    "unserved apiVersion",
			entries: []metav1.ManagedFieldsEntry{{Manager: "a", Operation: apply, APIVersion: "v0", FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:data":{}}`)}},
			opts:    Options{Served: func(gvk schema.GroupVersionKind) bool { return gvk.Version == "v1" }},
			want:    []string{"unserved-apiversion a | kubectl ssa migrate apiversions configmap/web -n shop"},
		},
		{
			name:    "last-applied under and over the threshold",
			entries: []metav1.ManagedFieldsEntry{entry("a", apply, "", `{"f:data":{"f:x":{}}}`)},
			ann:     map[string]string{ownership.LastAppliedAnnotation: "0123456789"},
			opts:    Options{LastAppliedThreshold: 9},
			want:    []string{"last-applied-size  .metadata.annotations[\"kubectl.kubernetes.io/last-applied-configuration\"] | kubectl ssa migrate configmap/web -n shop --remove-last-applied"},
		},
		{
			name: "shared appliers, named in order, the fix releasing the last",
			entries: []metav1.ManagedFieldsEntry{
				entry("helm", apply, "", `{"f:data":{"f:x":{},"f:z":{}}}`),
				entry("flux", apply, "", `{"f:data":{"f:x":{},"f:y":{}}}`),
			},
			want: []string{"shared-appliers flux .data.x | kubectl ssa handover release configmap/web -n shop --from helm --field .data.x"},
		},
		{
			name: "key fields of shared list items are not listed",
			entries: []metav1.ManagedFieldsEntry{
				entry("ci", apply, "", `{"f:spec":{"f:endpoints":{"k:{\"host\":\"a\",\"port\":80}":{".":{},"f:host":{},"f:port":{},"f:weight":{}}}}}`),
				entry("ops", apply, "", `{"f:spec":{"f:endpoints":{"k:{\"host\":\"a\",\"port\":80}":{".":{},"f:host":{},"f:port":{},"f:weight":{}}}}}`),
			},
			want: []string{`shared-appliers ci .spec.endpoints[host="a",port=80].weight | kubectl ssa handover release configmap/web -n shop --from ops --field '.spec.endpoints[host="a",port=80].weight'`},
		},
		{
			name: "history managers fold into the one applier",
			entries: []metav1.ManagedFieldsEntry{
				entry("before-first-apply", update, "", `{"f:data":{"f:x":{}}}`),
				entry("ancient-changes", update, "", `{"f:data":{"f:y":{}}}`),
				entry("flux", apply, "", `{"f:data":{"f:z":{}}}`),
			},
			want: []string{
				"before-first-apply before-first-apply .data.x | kubectl ssa migrate fold configmap/web -n shop --field-manager flux",
				"ancient-changes ancient-changes .data.y | kubectl ssa migrate fold configmap/web -n shop --field-manager flux",
			},
		},
		{
			name:    "no applier to fold into: the user names it",
			entries: []metav1.ManagedFieldsEntry{entry("ancient-changes", update, "", `{"f:data":{"f:y":{}}}`)},
			want:    []string{"ancient-changes ancient-changes .data.y | kubectl ssa migrate fold configmap/web -n shop --field-manager APPLIER"},
		},
		{
			name:    "old kubectl's client-side apply (kubectl, Update, owning the annotation) is a leftover, not a manual edit",
			entries: []metav1.ManagedFieldsEntry{entry("kubectl", update, "", `{"f:metadata":{"f:annotations":{"f:kubectl.kubernetes.io/last-applied-configuration":{}}},"f:data":{"f:a":{}}}`)},
			want:    []string{"csa-leftover kubectl | kubectl ssa migrate configmap/web -n shop"},
		},
		{
			// (A ConfigMap stands in for the StatefulSet controller's
			// ControllerRevision: a controller's copy of its owner's
			// annotation.)
			name:    "a controller's copy of its owner's last-applied annotation is no leftover",
			entries: []metav1.ManagedFieldsEntry{entry("kube-controller-manager", update, "", `{"f:metadata":{"f:annotations":{"f:kubectl.kubernetes.io/last-applied-configuration":{}}},"f:data":{"f:a":{}}}`)},
			ann:     map[string]string{ownership.LastAppliedAnnotation: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"web"}}`},
			refs:    []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "db", UID: "u", Controller: &yes}},
			want:    []string{},
		},
		{
			name: "the apiserver's own priority-and-fairness manager is not drift",
			entries: []metav1.ManagedFieldsEntry{
				entry("api-priority-and-fairness-config-producer-v1", update, "", `{"f:data":{"f:x":{}}}`),
			},
			opts: Options{Expect: []string{"gitops"}},
			want: []string{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := Check(Object{Ref: ref, ManagedFields: tt.entries, Annotations: tt.ann, OwnerReferences: tt.refs}, tt.opts)
			if diff := cmp.Diff(tt.want, got(fs)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// The fixes of a hand edit say what they do to the values: adopt (the
// default) returns the object to its declared state and says that
// reverting the pod template rolls the pods; forget leaves the values.
func TestFixesSayWhatTheyDo(t *testing.T) {
	obj := objectOf((&scenario.State{}).Run(t,
		scenario.Apply{Manager: "gitops", Manifest: web},
		scenario.Update{Manager: "kubectl-set", Mutate: func(u *unstructured.Unstructured) {
			c, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
			c[0].(map[string]any)["image"] = "nginx:1.28"
			_ = unstructured.SetNestedSlice(u.Object, c, "spec", "template", "spec", "containers")
		}}).Live)
	fs := Check(obj, Options{})
	if len(fs) != 1 || len(fs[0].Fixes) != 2 {
		t.Fatalf("findings %+v", fs)
	}
	adopt, forget := fs[0].Fixes[0], fs[0].Fixes[1]
	if adopt.Mode != v1alpha1.FixAdopt || fs[0].Fix.String() != adopt.Command.String() || !strings.Contains(adopt.Summary, "keeps or reverts them as its manifest says") || !strings.Contains(adopt.Summary, "rolls the pods") {
		t.Errorf("adopt %+v (fix %s)", adopt, fs[0].Fix)
	}
	if forget.Mode != v1alpha1.FixForget || forget.Command.String() != "kubectl ssa handover release deployment.v1.apps/web -n shop --from kubectl-set --all" || !strings.Contains(forget.Summary, "values stay") {
		t.Errorf("forget %+v", forget)
	}
	// --fix forget names forget first; adopt stays an alternative.
	fs = Check(obj, Options{Fix: v1alpha1.FixForget})
	if len(fs) != 1 || len(fs[0].Fixes) != 2 || fs[0].Fixes[0].Mode != v1alpha1.FixForget || fs[0].Fixes[1].Mode != v1alpha1.FixAdopt || fs[0].Fix.String() != forget.Command.String() {
		t.Errorf("--fix forget: %+v", fs)
	}
}

func TestReportMaxAndSummary(t *testing.T) {
	ref := v1alpha1.ObjectRef{APIVersion: "v1", Kind: "ConfigMap", Namespace: "a", Name: "x"}
	fs := Check(Object{Ref: ref, ManagedFields: []metav1.ManagedFieldsEntry{
		entry("kubectl-edit", update, "", `{"f:data":{"f:x":{}}}`),
		entry("old", update, "", `{}`),
	}}, Options{})
	r := NewReport([]string{"c"}, 1, fs, nil)
	if r.Max() != v1alpha1.SeverityWarning {
		t.Errorf("max %q", r.Max())
	}
	want := []v1alpha1.CodeCount{{Code: v1alpha1.CodeManualEdit, Severity: v1alpha1.SeverityWarning, Findings: 1, Objects: 1}, {Code: v1alpha1.CodeEmptyManager, Severity: v1alpha1.SeverityInfo, Findings: 1, Objects: 1}}
	if diff := cmp.Diff(want, r.Summary.Codes); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if NewReport(nil, 0, nil, nil).Max() != "" {
		t.Error("an empty report has a severity")
	}
}
