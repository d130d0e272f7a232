package ownership_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kubectl-ssa/kubectl-ssa/internal/benchdata"
	"github.com/kubectl-ssa/kubectl-ssa/internal/testkit"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/pathlang"
)

func object(t testing.TB, manifest string) *unstructured.Unstructured {
	t.Helper()
	return testkit.Object(t, manifest)
}

const widget = testkit.Widget

// ownerText is "manager Operation[ /subresource] apiVersion".
func ownerText(o v1alpha1.Owner) string {
	s := o.Manager + " " + string(o.Operation)
	if o.Subresource != "" {
		s += " /" + string(o.Subresource)
	}
	return s + " " + o.APIVersion
}

type managerView struct {
	Owner  string
	Time   string
	Fields int
}

type fieldView struct {
	Path   string
	Owners []string
	Value  string // compact JSON, "-" for none
}

type reportView struct {
	Object   v1alpha1.ObjectRef
	Managers []managerView
	Fields   []fieldView
	Unowned  []string
}

func view(r *ownership.Report) reportView {
	v := reportView{Object: r.Object, Managers: []managerView{}, Fields: []fieldView{}, Unowned: apiStrings(r.Unowned)}
	for _, m := range r.Managers {
		tm := "-"
		if m.Time != nil {
			tm = m.Time.UTC().Format("2006-01-02T15:04:05Z")
		}
		v.Managers = append(v.Managers, managerView{Owner: ownerText(m.Owner), Time: tm, Fields: m.FieldCount})
	}
	for _, f := range r.Fields {
		fv := fieldView{Path: f.Path.APIServerString(), Value: "-"}
		if f.HasValue {
			fv.Value = fmt.Sprintf("%v", f.Value)
		}
		for _, o := range f.Owners {
			fv.Owners = append(fv.Owners, ownerText(o))
		}
		v.Fields = append(v.Fields, fv)
		if f.Path.APIServerString() != f.Path.Elements().String() {
			panic(fmt.Sprintf("Path %q and its elements %q differ", f.Path.APIServerString(), f.Path.Elements().String()))
		}
	}
	return v
}

// apiStrings is the apiserver's form of paths, as reports marshal them.
func apiStrings(ps []pathlang.Path) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.APIServerString()
	}
	return out
}

func TestAnalyze(t *testing.T) {
	const platform, team = "platform Apply example.com/v1", "team Apply example.com/v1"
	tests := []struct {
		name     string
		manifest string
		want     reportView
	}{
		{
			name:     "every element kind, shared paths, idle entries, other apiVersion, subresource",
			manifest: widget,
			want: reportView{
				Object: v1alpha1.ObjectRef{APIVersion: "example.com/v1", Kind: "Widget", Namespace: "shop", Name: "w1", UID: "0b6c8f7e-1111-4222-8333-444455556666", ResourceVersion: "7"},
				Managers: []managerView{
					{Owner: platform, Time: "2026-01-02T00:00:00Z", Fields: 11},
					{Owner: team, Time: "2026-01-02T12:00:00Z", Fields: 3},
					{Owner: "old-client Update example.com/v1beta1", Time: "-", Fields: 1},
					{Owner: "widget-controller Update /status example.com/v1", Time: "2026-01-02T13:00:00Z", Fields: 1},
					{Owner: "idle Apply example.com/v1", Time: "-", Fields: 0},
					{Owner: "bare Update example.com/v1", Time: "-", Fields: 0},
				},
				Fields: []fieldView{
					{Path: `.metadata.finalizers[="example.com/keep"]`, Owners: []string{platform}, Value: "example.com/keep"},
					{Path: ".metadata.labels.app.kubernetes.io/name", Owners: []string{platform}, Value: "web"},
					{Path: ".metadata.labels.tier", Owners: []string{"old-client Update example.com/v1beta1"}, Value: "frontend"},
					{Path: `.spec.containers[name="web"]`, Owners: []string{platform, team}, Value: "-"},
					{Path: `.spec.containers[name="web"].image`, Owners: []string{platform, team}, Value: "nginx:1.27"},
					{Path: `.spec.containers[name="web"].name`, Owners: []string{platform, team}, Value: "web"},
					{Path: `.spec.containers[name="web"].ports[containerPort=80,protocol="TCP"]`, Owners: []string{platform}, Value: "-"},
					{Path: `.spec.containers[name="web"].ports[containerPort=80,protocol="TCP"].containerPort`, Owners: []string{platform}, Value: "80"},
					{Path: `.spec.containers[name="web"].ports[containerPort=80,protocol="TCP"].protocol`, Owners: []string{platform}, Value: "TCP"},
					{Path: ".spec.selector", Owners: []string{platform}, Value: "map[matchLabels:map[app:web]]"},
					{Path: ".spec.steps[0].run", Owners: []string{platform}, Value: "make"},
					{Path: ".spec.steps[1].run", Owners: []string{platform}, Value: "test"},
					{Path: ".status.phase", Owners: []string{"widget-controller Update /status example.com/v1"}, Value: "Ready"},
				},
				Unowned: []string{
					".metadata.annotations",
					`.metadata.finalizers[="example.com/other"]`,
					`.spec.containers[name="web"].ports[containerPort=8080,protocol="UDP"]`,
					".spec.replicas",
					".spec.steps[0].retries",
					".status.observedGeneration",
				},
			},
		},
		{
			name: "no managedFields: everything but identity metadata is unowned",
			manifest: `
apiVersion: v1
kind: ConfigMap
metadata:
  name: c
  namespace: default
  uid: u1
  resourceVersion: "1"
  creationTimestamp: "2026-01-01T00:00:00Z"
  labels: {a: b}
data:
  k: v
`,
			want: reportView{
				Object:   v1alpha1.ObjectRef{APIVersion: "v1", Kind: "ConfigMap", Namespace: "default", Name: "c", UID: "u1", ResourceVersion: "1"},
				Managers: []managerView{},
				Fields:   []fieldView{},
				Unowned:  []string{".data", ".metadata.labels"},
			},
		},
		{
			name: "cluster-scoped, dotted and slashed keys, a granular map owned as a whole",
			manifest: `
apiVersion: v1
kind: Namespace
metadata:
  name: team-a
  labels:
    kubernetes.io/metadata.name: team-a
    example.com/cost-center: "42"
  annotations:
    a.b/c.d: x
  managedFields:
  - manager: kube-apiserver
    operation: Update
    apiVersion: v1
    fieldsType: FieldsV1
    fieldsV1:
      f:metadata:
        f:labels:
          .: {}
          f:kubernetes.io/metadata.name: {}
  - manager: finance
    operation: Apply
    apiVersion: v1
    fieldsType: FieldsV1
    fieldsV1:
      f:metadata:
        f:labels:
          f:example.com/cost-center: {}
        f:annotations: {}
`,
			want: reportView{
				Object: v1alpha1.ObjectRef{APIVersion: "v1", Kind: "Namespace", Name: "team-a"},
				Managers: []managerView{
					{Owner: "kube-apiserver Update v1", Time: "-", Fields: 2},
					{Owner: "finance Apply v1", Time: "-", Fields: 2},
				},
				Fields: []fieldView{
					{Path: ".metadata.annotations", Owners: []string{"finance Apply v1"}, Value: "map[a.b/c.d:x]"},
					{Path: ".metadata.labels", Owners: []string{"kube-apiserver Update v1"}, Value: "-"},
					{Path: ".metadata.labels.example.com/cost-center", Owners: []string{"finance Apply v1"}, Value: "42"},
					{Path: ".metadata.labels.kubernetes.io/metadata.name", Owners: []string{"kube-apiserver Update v1"}, Value: "team-a"},
				},
				Unowned: []string{},
			},
		},
		{
			name: "owned paths missing from the object have no value and list no unowned",
			manifest: `
apiVersion: v1
kind: ConfigMap
metadata:
  name: c
  managedFields:
  - manager: gone
    operation: Apply
    apiVersion: v1
    fieldsType: FieldsV1
    fieldsV1:
      f:data:
        f:removed: {}
`,
			want: reportView{
				Object:   v1alpha1.ObjectRef{APIVersion: "v1", Kind: "ConfigMap", Name: "c"},
				Managers: []managerView{{Owner: "gone Apply v1", Time: "-", Fields: 1}},
				Fields:   []fieldView{{Path: ".data.removed", Owners: []string{"gone Apply v1"}, Value: "-"}},
				Unowned:  []string{},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := object(t, tt.manifest)
			r, err := ownership.Analyze(obj, ownership.Options{})
			if err != nil {
				t.Fatal(err)
			}
			// Each manager's set is what structured-merge-diff decodes.
			for i, e := range obj.GetManagedFields() {
				want, err := ownership.DecodeEntry(e)
				if err != nil {
					t.Fatal(err)
				}
				if got := r.Managers[i].Set; !got.Equals(want) || got.Size() != r.Managers[i].FieldCount {
					t.Errorf("manager %s: set\n%s\nwant\n%s", e.Manager, got, want)
				}
			}
			if r.Kind != v1alpha1.OwnershipReportKind {
				t.Errorf("Kind = %q", r.Kind)
			}
			if diff := cmp.Diff(tt.want, view(r)); diff != "" {
				t.Errorf("report (-want +got):\n%s", diff)
			}
			if _, found, _ := unstructured.NestedFieldNoCopy(r.Content, "metadata", "managedFields"); found {
				t.Error("Content keeps metadata.managedFields")
			}
		})
	}
}

// The apiserver never tracks identity and server-maintained metadata, so
// it is never reported as unowned, whatever else is.
func TestAnalyzeNeverListsIdentityAsUnowned(t *testing.T) {
	r, err := ownership.Analyze(object(t, widget), ownership.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{".apiVersion", ".kind", ".metadata", ".metadata.name", ".metadata.namespace", ".metadata.uid",
		".metadata.resourceVersion", ".metadata.generation", ".metadata.creationTimestamp", ".metadata.managedFields",
		".metadata.selfLink", ".metadata.deletionTimestamp", ".metadata.deletionGracePeriodSeconds"} {
		for _, u := range apiStrings(r.Unowned) {
			if u == p || strings.HasPrefix(u, p+".") && p != ".metadata" {
				t.Errorf("%s listed as unowned", u)
			}
		}
		if p != ".metadata" && !pathlang.NeverOwned(p) {
			t.Errorf("NeverOwned(%q) = false", p)
		}
	}
}

func TestAnalyzeErrors(t *testing.T) {
	const head = `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
  managedFields:
  - manager: fine
    operation: Apply
    apiVersion: apps/v1
    fieldsType: FieldsV1
    fieldsV1: {f:spec: {f:replicas: {}}}
`
	tests := []struct {
		name      string
		manifest  string
		wantEntry int // -1: not a *CorruptError
		wantIn    []string
	}{
		{
			name:      "set value that is not JSON",
			manifest:  head + "  - {manager: bad, operation: Update, apiVersion: apps/v1, fieldsType: FieldsV1, fieldsV1: {f:metadata: {f:finalizers: {'v:notjson': {}}}}}\n",
			wantEntry: 1,
			wantIn:    []string{"Deployment/shop/web: managedFields[1] is corrupt"},
		},
		{
			name:      "a member that is not an object",
			manifest:  head + "  - {manager: bad, operation: Update, apiVersion: apps/v1, fieldsType: FieldsV1, fieldsV1: {f:spec: 3}}\n",
			wantEntry: 1,
			wantIn:    []string{"Deployment/shop/web: managedFields[1] is corrupt"},
		},
		{
			name:      "key that is not JSON",
			manifest:  head + "  - {manager: bad, operation: Update, apiVersion: apps/v1, fieldsType: FieldsV1, fieldsV1: {f:spec: {f:containers: {'k:{name:web': {}}}}}\n",
			wantEntry: 1,
			wantIn:    []string{"Deployment/shop/web: managedFields[1] is corrupt"},
		},
		{
			name:      "index that is not a number",
			manifest:  head + "  - {manager: bad, operation: Update, apiVersion: apps/v1, fieldsType: FieldsV1, fieldsV1: {f:spec: {f:args: {i:one: {}}}}}\n",
			wantEntry: 1,
			wantIn:    []string{"managedFields[1] is corrupt"},
		},
		{
			name:      "unknown fieldsType",
			manifest:  head + "  - {manager: bad, operation: Update, apiVersion: apps/v1, fieldsType: FieldsV2, fieldsV1: {f:spec: {}}}\n",
			wantEntry: 1,
			wantIn:    []string{"managedFields[1] is corrupt", `unknown fieldsType "FieldsV2"`},
		},
		{
			name:      "first entry corrupt",
			manifest:  strings.Replace(head, "f:replicas", "i:x", 1),
			wantEntry: 0,
			wantIn:    []string{"Deployment/shop/web: managedFields[0] is corrupt"},
		},
		{
			name:      "managedFields is not a list",
			manifest:  "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  managedFields: {manager: x}\n",
			wantEntry: -1,
			wantIn:    []string{"ConfigMap/c: metadata.managedFields is malformed"},
		},
		{
			name:      "an entry is not an object",
			manifest:  "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  namespace: ns\n  managedFields: [x]\n",
			wantEntry: -1,
			wantIn:    []string{"ConfigMap/ns/c: metadata.managedFields is malformed", "entry 0"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ownership.Analyze(object(t, tt.manifest), ownership.Options{})
			if err == nil {
				t.Fatal("Analyze succeeded")
			}
			var ce *ownership.CorruptError
			switch {
			case tt.wantEntry < 0 && errors.As(err, &ce):
				t.Errorf("got a *CorruptError for a malformed list: %v", err)
			case tt.wantEntry >= 0 && !errors.As(err, &ce):
				t.Fatalf("got %T %v, want a *CorruptError", err, err)
			case tt.wantEntry >= 0:
				if ce.Object != "Deployment/shop/web" || ce.Entry != tt.wantEntry || ce.Err == nil {
					t.Errorf("CorruptError{Object: %q, Entry: %d, Err: %v}", ce.Object, ce.Entry, ce.Err)
				}
				if !errors.Is(err, ce.Err) {
					t.Error("CorruptError does not unwrap to its cause")
				}
			}
			for _, s := range tt.wantIn {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q lacks %q", err, s)
				}
			}
		})
	}
}

// Element kinds structured-merge-diff does not know are skipped, not
// errors: the apiserver skips them too (a newer server may write them).
func TestAnalyzeSkipsUnknownElementKinds(t *testing.T) {
	r, err := ownership.Analyze(object(t, `
apiVersion: v1
kind: ConfigMap
metadata:
  name: c
  managedFields:
  - {manager: m, operation: Apply, apiVersion: v1, fieldsType: FieldsV1, fieldsV1: {f:data: {f:k: {}, x:future: {}}}}
data: {k: v}
`), ownership.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range r.Fields {
		got = append(got, f.Path.APIServerString())
	}
	if diff := cmp.Diff([]string{".data.k"}, got); diff != "" {
		t.Errorf("fields (-want +got):\n%s", diff)
	}
}

const secret = `
apiVersion: v1
kind: Secret
metadata:
  name: db
  namespace: shop
  annotations:
    kubectl.kubernetes.io/last-applied-configuration: '{"data":{"password":"aHVudGVyMg=="}}'
    example.com/plain: visible
  managedFields:
  - manager: kubectl-client-side-apply
    operation: Update
    apiVersion: v1
    fieldsType: FieldsV1
    fieldsV1:
      f:data:
        .: {}
        f:password: {}
      f:stringData:
        f:token: {}
      f:metadata:
        f:annotations:
          .: {}
          f:kubectl.kubernetes.io/last-applied-configuration: {}
          f:example.com/plain: {}
      f:type: {}
type: Opaque
data:
  password: aHVudGVyMg==
stringData:
  token: s3cr3t
`

func TestAnalyzeSecretRedaction(t *testing.T) {
	const lastApplied = `{"data":{"password":"aHVudGVyMg=="}}`
	tests := []struct {
		name     string
		manifest string
		show     bool
		want     map[string]string // path -> value as %v
	}{
		{
			name:     "secret values redacted by default",
			manifest: secret,
			want: map[string]string{
				".data.password":    v1alpha1.Redacted,
				".stringData.token": v1alpha1.Redacted,
				".metadata.annotations.kubectl.kubernetes.io/last-applied-configuration": v1alpha1.Redacted,
				".metadata.annotations.example.com/plain":                                "visible",
				".type": "Opaque",
			},
		},
		{
			name:     "shown with ShowSecretValues",
			manifest: secret,
			show:     true,
			want: map[string]string{
				".data.password":    "aHVudGVyMg==",
				".stringData.token": "s3cr3t",
				".metadata.annotations.kubectl.kubernetes.io/last-applied-configuration": lastApplied,
				".metadata.annotations.example.com/plain":                                "visible",
				".type": "Opaque",
			},
		},
		{
			name:     "a ConfigMap is not redacted",
			manifest: strings.NewReplacer("kind: Secret", "kind: ConfigMap", "type: Opaque\n", "").Replace(secret),
			want: map[string]string{
				".data.password":    "aHVudGVyMg==",
				".stringData.token": "s3cr3t",
				".metadata.annotations.kubectl.kubernetes.io/last-applied-configuration": lastApplied,
				".metadata.annotations.example.com/plain":                                "visible",
			},
		},
		{
			name:     "redacted even when another annotation is not a string",
			manifest: strings.Replace(secret, "example.com/plain: visible", "example.com/plain: 3", 1),
			want: map[string]string{
				".data.password":    v1alpha1.Redacted,
				".stringData.token": v1alpha1.Redacted,
				".metadata.annotations.kubectl.kubernetes.io/last-applied-configuration": v1alpha1.Redacted,
				".metadata.annotations.example.com/plain":                                "3",
				".type": "Opaque",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := object(t, tt.manifest)
			before := obj.DeepCopy()
			r, err := ownership.Analyze(obj, ownership.Options{ShowSecretValues: tt.show})
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, f := range r.Fields {
				if f.HasValue {
					got[f.Path.APIServerString()] = fmt.Sprintf("%v", f.Value)
				}
				if f.Redacted != (f.HasValue && f.Value == v1alpha1.Redacted) {
					t.Errorf("%s: Redacted = %v with value %v", f.Path, f.Redacted, f.Value)
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("values (-want +got):\n%s", diff)
			}
			// Content (what blame shows) is redacted the same way.
			for path, want := range tt.want {
				p, err := pathlang.ParsePath(path, r.Content)
				if err != nil {
					t.Fatal(err)
				}
				v, _ := pathlang.Lookup(r.Content, p)
				if fmt.Sprintf("%v", v) != want {
					t.Errorf("Content at %s = %v, want %v", path, v, want)
				}
			}
			if diff := cmp.Diff(before.Object, obj.Object); diff != "" {
				t.Errorf("Analyze changed its input (-before +after):\n%s", diff)
			}
		})
	}
}

// Analyze decodes fieldsV1 itself, straight from the unstructured object:
// each manager's set must be what structured-merge-diff decodes from the
// entry, and the owned fields exactly the union of those sets.
func TestAnalyzeDecodesAsStructuredMergeDiff(t *testing.T) {
	objects := map[string]*unstructured.Unstructured{
		"widget":                   object(t, widget),
		"secret":                   object(t, secret),
		"configmap-5000-keys":      benchdata.ConfigMap(5000),
		"deployment-50-containers": benchdata.Deployment(50),
	}
	files, err := filepath.Glob("../render/testdata/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("render fixtures: %v %v", files, err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		// skip the golden YAML reports next to the fixtures
		if obj := object(t, string(b)); obj.GetKind() != v1alpha1.OwnershipReportKind {
			objects[filepath.Base(f)] = obj
		}
	}
	for name, obj := range objects {
		t.Run(name, func(t *testing.T) {
			r, err := ownership.Analyze(obj, ownership.Options{})
			if err != nil {
				t.Fatal(err)
			}
			union := map[string][]string{}
			for i, e := range obj.GetManagedFields() {
				want, err := ownership.DecodeEntry(e)
				if err != nil {
					t.Fatal(err)
				}
				if !r.Managers[i].Set.Equals(want) || r.Managers[i].FieldCount != want.Size() {
					t.Errorf("manager %d (%s): set differs from DecodeEntry's:\n%s\nwant\n%s", i, e.Manager, r.Managers[i].Set, want)
				}
				want.Iterate(func(p fieldpath.Path) { union[p.String()] = append(union[p.String()], e.Manager) })
			}
			got := map[string][]string{}
			for _, f := range r.Fields {
				for _, o := range f.Owners {
					got[f.Path.APIServerString()] = append(got[f.Path.APIServerString()], o.Manager)
				}
			}
			if diff := cmp.Diff(union, got); diff != "" {
				t.Errorf("fields and owners (-sets +report):\n%s", diff)
			}
		})
	}
}

// AnalyzeTree is Analyze without Fields and Unowned: the same managers,
// owners, trie and content.
func TestAnalyzeTreeIsAnalyzeLessFields(t *testing.T) {
	obj := object(t, widget)
	full, err := ownership.Analyze(obj, ownership.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tree, err := ownership.AnalyzeTree(obj, ownership.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(tree.Fields) != 0 || len(tree.Unowned) != 0 || len(full.Fields) == 0 {
		t.Fatalf("fields %d, unowned %d (Analyze: %d fields)", len(tree.Fields), len(tree.Unowned), len(full.Fields))
	}
	want, got := view(full), view(tree)
	want.Fields, want.Unowned = nil, nil
	got.Fields, got.Unowned = nil, nil
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-Analyze +AnalyzeTree):\n%s", d)
	}
	paths := func(n *ownership.Node) []string {
		var out []string
		n.Walk(func(c *ownership.Node) { out = append(out, fmt.Sprint(c.Path.String(), c.Owners)) })
		return out
	}
	if d := cmp.Diff(paths(full.Tree), paths(tree.Tree)); d != "" || !cmp.Equal(full.Owners, tree.Owners) || !cmp.Equal(full.Content, tree.Content) {
		t.Errorf("trie, owners or content differ: %s", d)
	}
}

// Heads is GetManagedFields without FieldsV1, malformed entries included.
func TestHeadsIsGetManagedFieldsWithoutFieldsV1(t *testing.T) {
	objects := map[string]*unstructured.Unstructured{
		"widget":                   object(t, widget),
		"secret":                   object(t, secret),
		"deployment-50-containers": benchdata.Deployment(50),
		"no managedFields":         object(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n"),
		"empty managedFields":      object(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, managedFields: []}\n"),
		"null managedFields":       object(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, managedFields: null}\n"),
		"not a list":               object(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, managedFields: {a: b}}\n"),
		"entry not an object":      object(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, managedFields: [x]}\n"),
		"manager not a string":     object(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, managedFields: [{manager: [1]}]}\n"),
		"bad time":                 object(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, managedFields: [{manager: m, time: yesterday}]}\n"),
		"fieldsV1 a string":        object(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, managedFields: [{manager: m, operation: Update, fieldsType: FieldsV1, fieldsV1: x, subresource: status, time: '2026-11-26T10:00:00Z'}]}\n"),
	}
	for name, obj := range objects {
		t.Run(name, func(t *testing.T) {
			want := obj.GetManagedFields()
			for i := range want {
				want[i].FieldsV1 = nil
			}
			if diff := cmp.Diff(want, ownership.Heads(obj)); diff != "" {
				t.Errorf("(-GetManagedFields +Heads):\n%s", diff)
			}
		})
	}
}
