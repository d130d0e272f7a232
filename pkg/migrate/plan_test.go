package migrate

import (
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kubectl-ssa/kubectl-ssa/internal/scenario"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
)

// entry is a managedFields entry written by hand, for what the apiserver's
// field manager does not write (entries at other apiVersions, corrupt
// ones); built writes the rest.
func entry(manager string, op metav1.ManagedFieldsOperationType, apiVersion, fields string) metav1.ManagedFieldsEntry {
	t := metav1.NewTime(time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC))
	return metav1.ManagedFieldsEntry{Manager: manager, Operation: op, APIVersion: apiVersion, Time: &t, FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(fields)}
}

// built is the object as the writes leave it (through the apiserver's
// field manager), as MakePlan reads it.
func built(t *testing.T, ops ...scenario.Op) Object {
	t.Helper()
	u := (&scenario.State{}).Run(t, ops...).Live
	return Object{Ref: ownership.RefOf(u), ManagedFields: u.GetManagedFields(), Annotations: u.GetAnnotations(), OwnerReferences: u.GetOwnerReferences()}
}

// owned lists "manager/Operation@apiVersion: paths" for every entry.
func owned(t *testing.T, es []metav1.ManagedFieldsEntry) []string {
	t.Helper()
	var out []string
	for _, e := range es {
		s, err := ownership.DecodeEntry(e)
		if err != nil {
			t.Fatal(err)
		}
		var paths []string
		s.Iterate(func(p fieldpath.Path) { paths = append(paths, p.String()) })
		out = append(out, e.Manager+"/"+string(e.Operation)+"@"+e.APIVersion+": "+strings.Join(paths, " "))
	}
	sort.Strings(out)
	return out
}

const lastApplied = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"annotations":{},"labels":{"tier":"web"},"name":"app","namespace":"ns"},"spec":{"template":{"spec":{"containers":[{"image":"nginx","name":"app","ports":[{"containerPort":8080}]}]}}}}`

// withLastApplied is a Deployment named app with a last-applied
// annotation and more.
func withLastApplied(annotation, more string) string {
	return `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: app
  namespace: ns
  annotations:
    kubectl.kubernetes.io/last-applied-configuration: '` + annotation + `'
` + more
}

// app is the Deployment app with spec.
func app(spec string) string {
	return "{apiVersion: apps/v1, kind: Deployment, metadata: {name: app, namespace: ns}, spec: " + spec + "}"
}

// csaCreate is client-side apply's create of lastApplied: it records
// everything it set, the fields the apiserver defaulted and the map and
// list "." markers included.
var csaCreate = scenario.Update{Manager: "kubectl-client-side-apply", Create: withLastApplied(lastApplied, `
  labels: {tier: web}
spec:
  progressDeadlineSeconds: 600
  template:
    spec:
      containers:
      - name: app
        image: nginx
        terminationMessagePath: /dev/termination-log
        ports: [{containerPort: 8080, protocol: TCP}]
`)}

// controllerStatus is kube-controller-manager's write of a Deployment's
// status (which the apiserver created empty: status: {}).
var controllerStatus = scenario.Update{Manager: "kube-controller-manager", Subresource: "status", Mutate: scenario.Set(int64(1), "status", "replicas")}

func TestMakePlan(t *testing.T) {
	ref := v1alpha1.ObjectRef{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "ns", Name: "app"}
	content := map[string]any{"spec": map[string]any{"replicas": int64(1), "paused": true}}
	served := func(gvk schema.GroupVersionKind) bool { return gvk.Version != "v1beta1" }
	tests := []struct {
		name        string
		obj         Object
		opts        Options
		wantAction  string
		wantReason  string
		wantOwned   []string
		wantRemove  bool
		wantContent bool
		findings    []string
		noFindings  bool
	}{
		{
			name:       "client-side apply becomes the applier's declared fields",
			obj:        built(t, csaCreate, scenario.Update{Manager: "kubectl", Mutate: scenario.Set(int64(3), "spec", "replicas")}),
			opts:       Options{Mode: v1alpha1.MigrateCSA, Target: "kubectl"},
			wantAction: ActionMigrate,
			wantOwned: []string{
				// The port keyed with its defaulted protocol is matched, the
				// list and map "." markers, defaulted fields and the
				// annotation are left to nobody.
				`kubectl/Apply@apps/v1: .metadata.labels.tier .spec.template.spec.containers[name="app"] .spec.template.spec.containers[name="app"].image .spec.template.spec.containers[name="app"].name .spec.template.spec.containers[name="app"].ports[containerPort=8080,protocol="TCP"] .spec.template.spec.containers[name="app"].ports[containerPort=8080,protocol="TCP"].containerPort`,
				"kubectl/Update@apps/v1: .spec.replicas",
			},
			findings: []string{`client-side apply leftover: "kubectl-client-side-apply" (Update) owns the last-applied annotation and 13 fields`},
		},
		{
			name: "merged into an existing applier entry, --remove-last-applied",
			obj: built(t,
				scenario.Apply{Manager: "kubectl", Manifest: app("{paused: true}")},
				scenario.Update{Manager: "kubectl-client-side-apply", Mutate: func(u *unstructured.Unstructured) {
					u.SetAnnotations(map[string]string{ownership.LastAppliedAnnotation: lastApplied})
					u.SetLabels(map[string]string{"tier": "web"})
				}}),
			opts:       Options{Mode: v1alpha1.MigrateCSA, Target: "kubectl", RemoveLastApplied: true},
			wantAction: ActionMigrate,
			wantOwned:  []string{"kubectl/Apply@apps/v1: .metadata.labels.tier .spec.paused"},
			wantRemove: true,
		},
		{
			name:       "nothing to do",
			obj:        built(t, scenario.Apply{Manager: "kubectl", Manifest: app("{paused: true}")}),
			opts:       Options{Mode: v1alpha1.MigrateCSA, Target: "kubectl"},
			wantAction: ActionNone,
		},
		{
			name: "another apiVersion needs the content first",
			obj: Object{Ref: ref, ManagedFields: []metav1.ManagedFieldsEntry{
				entry("ci", "Update", "apps/v1beta1", `{"f:spec":{"f:replicas":{}}}`),
			}},
			opts:        Options{Mode: v1alpha1.MigrateRename, Target: "kubectl", From: []string{"ci"}},
			wantAction:  ActionNone,
			wantContent: true,
		},
		{
			name: "another apiVersion: carried over where the paths exist",
			obj: Object{Ref: ref, Content: content, ManagedFields: []metav1.ManagedFieldsEntry{
				entry("ci", "Update", "apps/v1beta1", `{"f:spec":{"f:replicas":{}}}`),
			}},
			opts:       Options{Mode: v1alpha1.MigrateRename, Target: "kubectl", From: []string{"ci"}},
			wantAction: ActionMigrate,
			wantOwned:  []string{"kubectl/Apply@apps/v1: .spec.replicas"},
		},
		{
			name: "another apiVersion: skipped where they don't",
			obj: Object{Ref: ref, Content: content, ManagedFields: []metav1.ManagedFieldsEntry{
				entry("ci", "Update", "apps/v1beta1", `{"f:spec":{"f:rollbackTo":{}}}`),
			}},
			opts:       Options{Mode: v1alpha1.MigrateRename, Target: "kubectl", From: []string{"ci"}},
			wantAction: ActionSkip,
			wantReason: `"ci" (Update) was recorded at apps/v1beta1 and owns .spec.rollbackTo, which do not exist at apps/v1`,
		},
		{
			name: "fold before-first-apply",
			obj: built(t,
				scenario.Update{Manager: "ci", Create: app("{paused: true}")},
				scenario.Update{Manager: "ci", Mutate: scenario.ResetManagedFields},
				scenario.Apply{Manager: "argocd", Manifest: app("{replicas: 2}")}),
			opts:       Options{Mode: v1alpha1.MigrateRename, Target: "argocd", Fold: true},
			wantAction: ActionMigrate,
			wantOwned:  []string{"argocd/Apply@apps/v1: .spec.paused .spec.replicas"},
		},
		{
			// An Update entry keeps a "." for each map it made: an Apply
			// entry records only their members.
			name:       "an Update entry renamed: its maps' own fields go",
			obj:        built(t, scenario.Update{Manager: "ci", Create: "{apiVersion: apps/v1, kind: Deployment, metadata: {name: app, namespace: ns, labels: {tier: web}}}"}),
			opts:       Options{Mode: v1alpha1.MigrateRename, Target: "kubectl", From: []string{"ci"}},
			wantAction: ActionMigrate,
			wantOwned:  []string{"kubectl/Apply@apps/v1: .metadata.labels.tier"},
		},
		{
			name: "release",
			obj: built(t,
				scenario.Update{Manager: "old-operator", Create: app("{paused: true}")},
				scenario.Apply{Manager: "argocd", Manifest: app("{replicas: 2}")}),
			opts:       Options{Mode: v1alpha1.MigrateRelease, From: []string{"old-operator"}},
			wantAction: ActionMigrate,
			wantOwned:  []string{"argocd/Apply@apps/v1: .spec.replicas"},
		},
		{
			name: "apiVersions the server stopped serving",
			obj: Object{Ref: ref, Content: content, ManagedFields: []metav1.ManagedFieldsEntry{
				entry("old", "Apply", "apps/v1beta1", `{"f:spec":{"f:replicas":{}}}`),
			}},
			opts:       Options{Mode: v1alpha1.MigrateAPIVersions, Served: served},
			wantAction: ActionMigrate,
			wantOwned:  []string{"old/Apply@apps/v1: .spec.replicas"},
			findings:   []string{`"old" (Apply) was recorded at apps/v1beta1, which the server no longer serves: the apiserver drops it on the next write`},
		},
		{
			name:       "unparsable last-applied annotation",
			obj:        built(t, scenario.Update{Manager: "kubectl-client-side-apply", Create: withLastApplied("{not json", "")}),
			opts:       Options{Mode: v1alpha1.MigrateCSA, Target: "kubectl"},
			wantAction: ActionSkip,
			wantReason: "the kubectl.kubernetes.io/last-applied-configuration annotation is not valid JSON",
		},
		{
			// What kubectl apply (client-side) records for a Secret from a
			// manifest with stringData: the apiserver stored it in data.
			name: "a Secret's stringData moves as its data",
			obj: built(t, scenario.Update{Manager: "kubectl-client-side-apply", Create: `
apiVersion: v1
kind: Secret
metadata:
  name: db
  namespace: ns
  annotations:
    kubectl.kubernetes.io/last-applied-configuration: '{"apiVersion":"v1","kind":"Secret","metadata":{"annotations":{},"name":"db","namespace":"ns"},"stringData":{"password":"s3cret"},"type":"Opaque"}'
data: {password: czNjcmV0}
type: Opaque
`}),
			opts:       Options{Mode: v1alpha1.MigrateCSA, Target: "kubectl"},
			wantAction: ActionMigrate,
			wantOwned:  []string{"kubectl/Apply@v1: .type .data.password"},
		},
		{
			// The StatefulSet controller copies the StatefulSet's
			// annotations, last-applied included, onto its revisions.
			name: "a controller's copy of its owner's annotation is no leftover",
			obj: built(t, scenario.Update{Manager: "kube-controller-manager", Create: `
apiVersion: apps/v1
kind: ControllerRevision
metadata:
  name: db-7d4b9c
  namespace: ns
  annotations:
    kubectl.kubernetes.io/last-applied-configuration: '{"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"annotations":{},"name":"db","namespace":"ns"},"spec":{"replicas":1}}'
  ownerReferences: [{apiVersion: apps/v1, kind: StatefulSet, name: db, uid: u, controller: true}]
data: {spec: {replicas: 1}}
revision: 1
`}),
			opts:       Options{Mode: v1alpha1.MigrateCSA, Target: "kubectl"},
			wantAction: ActionNone,
			noFindings: true,
		},
		{
			name: "client-side apply declaring none of its fields is not dropped",
			obj: built(t,
				scenario.Update{Manager: "kubectl-client-side-apply", Create: withLastApplied(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"app"}}`, "spec: {paused: true}\nstatus: {}\n")},
				controllerStatus),
			opts:       Options{Mode: v1alpha1.MigrateCSA, Target: "kubectl"},
			wantAction: ActionSkip,
			wantReason: `migrating would remove "kubectl-client-side-apply" (Update) and give their fields to no one`,
		},
		{
			name: "client-side apply owning only its annotation goes with it under --remove-last-applied",
			obj: built(t,
				scenario.Update{Manager: "kubectl-client-side-apply", Create: withLastApplied(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"app"}}`, "status: {}\n")},
				controllerStatus),
			opts:       Options{Mode: v1alpha1.MigrateCSA, Target: "kubectl", RemoveLastApplied: true},
			wantAction: ActionMigrate,
			wantRemove: true,
			wantOwned:  []string{"kube-controller-manager/Update@apps/v1: .status.replicas"},
		},
		{
			name:       "corrupt managedFields",
			obj:        Object{Ref: ref, ManagedFields: []metav1.ManagedFieldsEntry{entry("x", "Update", "apps/v1", `{"f:spec":`)}},
			opts:       Options{Mode: v1alpha1.MigrateCSA, Target: "kubectl"},
			wantAction: ActionSkip,
			wantReason: `managedFields[0] (x) is corrupt`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := MakePlan(tt.obj, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if p.NeedContent != tt.wantContent {
				t.Errorf("NeedContent = %v", p.NeedContent)
			}
			if p.Action != tt.wantAction {
				t.Fatalf("action %q (%s), want %q", p.Action, p.Reason, tt.wantAction)
			}
			if !strings.HasPrefix(p.Reason, tt.wantReason) {
				t.Errorf("reason %q, want prefix %q", p.Reason, tt.wantReason)
			}
			if tt.wantOwned != nil {
				if diff := cmp.Diff(tt.wantOwned, owned(t, p.After)); diff != "" {
					t.Errorf("managedFields after (-want +got):\n%s", diff)
				}
			}
			if p.RemoveLastApplied != tt.wantRemove {
				t.Errorf("RemoveLastApplied = %v", p.RemoveLastApplied)
			}
			if tt.noFindings && len(p.Findings) > 0 {
				t.Errorf("findings %q, want none", p.Findings)
			}
			for _, f := range tt.findings {
				found := false
				for _, g := range p.Findings {
					found = found || g == f
				}
				if !found {
					t.Errorf("findings %q lack %q", p.Findings, f)
				}
			}
		})
	}
}

func TestSameManagedFieldsIgnoresTimeAndOrder(t *testing.T) {
	a := []metav1.ManagedFieldsEntry{entry("a", "Apply", "v1", `{"f:data":{"f:x":{}}}`), entry("b", "Update", "v1", `{"f:data":{"f:y":{}}}`)}
	b := []metav1.ManagedFieldsEntry{a[1], a[0]}
	b[0].Time = nil
	if !SameManagedFields(a, b) {
		t.Error("same entries in another order, without times, compare different")
	}
	c := []metav1.ManagedFieldsEntry{a[0], entry("b", "Update", "v1", `{"f:data":{"f:z":{}}}`)}
	if SameManagedFields(a, c) {
		t.Error("different fields compare equal")
	}
}
