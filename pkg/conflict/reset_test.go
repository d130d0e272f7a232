package conflict_test

import (
	"testing"

	"github.com/kubectl-ssa/kubectl-ssa/internal/scenario"
	"github.com/kubectl-ssa/kubectl-ssa/internal/testkit"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/conflict"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/pathlang"
)

// exported is the web Deployment as `kubectl get -o yaml` shows it, with
// the apiserver's defaults, applied back as a manifest: the way most
// manifests come to own defaulted fields.
const exported = `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
spec:
  replicas: 3
  revisionHistoryLimit: 10
  progressDeadlineSeconds: 600
  strategy:
    type: RollingUpdate
    rollingUpdate: {maxSurge: 25%, maxUnavailable: 25%}
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      dnsPolicy: ClusterFirst
      restartPolicy: Always
      schedulerName: default-scheduler
      securityContext: {runAsNonRoot: true}
      terminationGracePeriodSeconds: 30
      containers:
      - name: web
        image: nginx:1.27
        imagePullPolicy: IfNotPresent
        terminationMessagePath: /dev/termination-log
        terminationMessagePolicy: File
        resources: {}
      - name: side
        image: busybox:1
`

type resetView struct {
	Path      string
	Value     any
	Unchanged bool
}

type removalView struct {
	Removed    []string
	Reset      []resetView
	MaybeReset []string
	Warnings   []string
	// Changes are the paths whose value the apply changes.
	Changes []string
	// Was is the live value each reset that changes it replaces, by path.
	Was map[string]any
}

func removals(r *v1alpha1.ConflictReport) removalView {
	v := removalView{Removed: pathlang.Strings(r.Removed), Warnings: r.Warnings, Changes: pathlang.Strings(r.Changes())}
	for _, rs := range r.Reset {
		if rs.PathElements.String() != rs.Path.APIServerString() {
			v.Warnings = append(v.Warnings, "PathElements "+rs.PathElements.String()+" for "+rs.Path.APIServerString())
		}
		v.Reset = append(v.Reset, resetView{Path: rs.Path.APIServerString(), Value: rs.Value, Unchanged: rs.Unchanged})
		if rs.Was != nil {
			if v.Was == nil {
				v.Was = map[string]any{}
			}
			v.Was[rs.Path.APIServerString()] = *rs.Was
		}
	}
	for _, m := range r.MaybeReset {
		v.MaybeReset = append(v.MaybeReset, m.Path.APIServerString()+": "+m.DependsOn)
	}
	return v
}

func TestSimulateResets(t *testing.T) {
	web := `.spec.template.spec.containers[name="web"]`
	tests := []struct {
		name    string
		first   string
		applied string
		want    removalView
	}{
		{
			name:    "defaults owned through an exported manifest are reset, not removed",
			first:   exported,
			applied: webWith("nginx:1.27"),
			want: removalView{
				Removed: []string{
					`.spec.template.spec.containers[name="side"]`,
					".spec.template.spec.securityContext.runAsNonRoot",
				},
				Reset: []resetView{
					{".spec.progressDeadlineSeconds", int64(600), true},
					{".spec.replicas", int64(1), false},
					{".spec.revisionHistoryLimit", int64(10), true},
					// strategy itself was never owned (only its fields): the
					// field manager drops it once empty, and its default
					// brings the fields back.
					{".spec.strategy.type", "RollingUpdate", true},
					{".spec.strategy.rollingUpdate.maxSurge", "25%", true},
					{".spec.strategy.rollingUpdate.maxUnavailable", "25%", true},
					{".spec.template.spec.dnsPolicy", "ClusterFirst", true},
					{".spec.template.spec.restartPolicy", "Always", true},
					{".spec.template.spec.schedulerName", "default-scheduler", true},
					{".spec.template.spec.terminationGracePeriodSeconds", int64(30), true},
					{web + ".imagePullPolicy", "IfNotPresent", true},
					// resources: {} is owned as a whole.
					{web + ".resources", map[string]any{}, true},
					{web + ".terminationMessagePath", "/dev/termination-log", true},
					{web + ".terminationMessagePolicy", "File", true},
				},
				Changes: []string{`.spec.template.spec.containers[name="side"]`, ".spec.template.spec.securityContext.runAsNonRoot", ".spec.replicas"},
				Was:     map[string]any{".spec.replicas": float64(3)}, // (as the manifest's YAML reads)
			},
		},
		{
			name:    "the pull policy follows the new image",
			first:   `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"shop"},"spec":{"template":{"spec":{"containers":[{"name":"web","image":"nginx:1.27","imagePullPolicy":"IfNotPresent"}]}}}}`,
			applied: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"shop"},"spec":{"template":{"spec":{"containers":[{"name":"web","image":"nginx:latest"}]}}}}`,
			want: removalView{Reset: []resetView{{web + ".imagePullPolicy", "Always", false}}, Changes: []string{web + ".imagePullPolicy"},
				Was: map[string]any{web + ".imagePullPolicy": "IfNotPresent"}},
		},
		{
			name:    "no rolling update parameters for Recreate",
			first:   `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"shop"},"spec":{"strategy":{"type":"RollingUpdate","rollingUpdate":{"maxSurge":1}}}}`,
			applied: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"shop"},"spec":{"strategy":{"type":"Recreate"}}}`,
			// The emptied rollingUpdate goes, and Recreate has no default for it.
			want: removalView{Removed: []string{".spec.strategy.rollingUpdate.maxSurge"}, Changes: []string{".spec.strategy.rollingUpdate.maxSurge"}},
		},
		{
			name:    "a default that depends on a value nobody has seen",
			first:   `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"shop"},"spec":{"strategy":{"type":"RollingUpdate","rollingUpdate":{"maxSurge":1}}}}`,
			applied: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"shop"},"spec":{"strategy":{"type":"Sideways"}}}`,
			want:    removalView{MaybeReset: []string{".spec.strategy.rollingUpdate.maxSurge: the value of type"}, Changes: []string{".spec.strategy.rollingUpdate.maxSurge"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &state{}
			apply{Manager: "ci", Manifest: tt.first}.Run(t, s)
			r, err := conflict.Simulate(conflict.Input{Live: s.Live, Applied: manifest(t, tt.applied), FieldManager: "ci", Schema: conflict.BuiltinSchema(), HasStatus: true})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, removals(&r.ConflictReport), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("removals (-want +got):\n%s", diff)
			}
		})
	}
}

type unstructuredCreater struct{}

func (unstructuredCreater) New(gvk schema.GroupVersionKind) (runtime.Object, error) {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetGroupVersionKind(gvk)
	return u, nil
}

// Dials have schema defaults (testdata/crd/dials.yaml).
func TestSimulateResetsCustomResource(t *testing.T) {
	sch, err := conflict.CRDSchema(manifest(t, testkit.Fixture(t, "crd/dials.yaml")))
	if err != nil {
		t.Fatal(err)
	}
	gvk := schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Dial"}
	first := `{"apiVersion":"example.com/v1","kind":"Dial","metadata":{"name":"g","namespace":"shop"},"spec":{"size":"l","note":"x","tls":{"enabled":false},"ports":[{"name":"http","protocol":"UDP"}]}}`
	applied := `{"apiVersion":"example.com/v1","kind":"Dial","metadata":{"name":"g","namespace":"shop"},"spec":{"ports":[{"name":"http"}]}}`
	tests := []struct {
		name   string
		schema managedfields.TypeConverter
		want   removalView
	}{
		{
			name:   "schema defaults",
			schema: sch,
			want: removalView{
				Removed: []string{".spec.note"},
				Reset: []resetView{
					{".spec.size", "m", false},
					{`.spec.ports[name="http"].protocol`, "TCP", false},
					// Only tls.enabled was owned; tls's default {} gets it back.
					{".spec.tls.enabled", true, false},
				},
				Changes: []string{".spec.note", ".spec.size", `.spec.ports[name="http"].protocol`, ".spec.tls.enabled"},
				Was:     map[string]any{".spec.size": "l", `.spec.ports[name="http"].protocol`: "UDP", ".spec.tls.enabled": false},
			},
		},
		{
			name:   "no schema: says so",
			schema: managedfields.NewDeducedTypeConverter(),
			want: removalView{
				// Deduced: the list is atomic and stays the applier's.
				Removed:  []string{".spec.note", ".spec.size", ".spec.tls"},
				Warnings: []string{"no schema with the defaults of example.com/v1, Kind=Dial: a removed field that has a schema default comes back with it"},
				Changes:  []string{".spec.note", ".spec.size", ".spec.tls"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fm, err := managedfields.NewDefaultCRDFieldManager(tt.schema, scenario.Converter{}, scenario.NopDefaulter{}, unstructuredCreater{}, gvk, gvk.GroupVersion(), "", nil)
			if err != nil {
				t.Fatal(err)
			}
			base := &unstructured.Unstructured{Object: map[string]any{}}
			base.SetGroupVersionKind(gvk)
			base.SetName("g")
			base.SetNamespace("shop")
			live, err := fm.Apply(base, manifest(t, first), "ci", false)
			if err != nil {
				t.Fatal(err)
			}
			r, err := conflict.Simulate(conflict.Input{Live: live.(*unstructured.Unstructured), Applied: manifest(t, applied), FieldManager: "ci", Schema: tt.schema, CRD: true})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, removals(&r.ConflictReport), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("removals (-want +got):\n%s", diff)
			}
		})
	}
}

// A CRD whose root preserves unknown fields types any spec: --local
// --schema reads it as the cluster does.
func TestCRDSchemaPreservesUnknownRoot(t *testing.T) {
	sch, err := conflict.CRDSchema(manifest(t, testkit.Fixture(t, "crd/blobs.yaml")))
	if err != nil {
		t.Fatal(err)
	}
	obj := manifest(t, `{"apiVersion":"example.com/v1","kind":"Blob","metadata":{"name":"b"},"spec":{"a":1,"list":[1,2]}}`)
	if _, err := sch.ObjectToTyped(obj); err != nil {
		t.Errorf("a Blob's spec is not typed: %v", err)
	}
}
