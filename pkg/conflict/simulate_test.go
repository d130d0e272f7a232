package conflict_test

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/kubectl-ssa/kubectl-ssa/internal/scenario"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/conflict"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
)

// The scenarios build the live object the way the apiserver does: every
// Apply and Update below runs through the apiserver's own field manager
// (managedfields.NewDefaultFieldManager) over the built-in schema, then
// conflict.Simulate predicts one more apply. Times are ignored.

// The scenario kit, by the names these tests use.
type (
	state     = scenario.State
	operation = scenario.Op
	apply     = scenario.Apply
	update    = scenario.Update
)

var (
	set                = scenario.Set
	manifest           = scenario.Manifest
	resetManagedFields = scenario.ResetManagedFields
)

const web = `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
spec:
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: %s
`

func webWith(image string) string { return fmt.Sprintf(web, image) }

// imageOnly applies just the image of the web container.
const imageOnly = `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
spec:
  template:
    spec:
      containers:
      - name: web
        image: %s
`

const replicas = `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
spec:
  replicas: %d
`

// Field sets of the web manifest, as the apiserver records them.
var (
	webFields = []string{
		".spec.selector",
		".spec.template.metadata.labels.app",
		`.spec.template.spec.containers[name="web"]`,
		`.spec.template.spec.containers[name="web"].image`,
		`.spec.template.spec.containers[name="web"].name`,
	}
	imageFields = []string{
		`.spec.template.spec.containers[name="web"]`,
		`.spec.template.spec.containers[name="web"].image`,
		`.spec.template.spec.containers[name="web"].name`,
	}
)

type conflictView struct{ Manager, Operation, Path string }

type retainedView struct {
	Path   string
	Owners []string
}

type entryView struct {
	Manager, Operation, Subresource, APIVersion string
	Fields                                      []string
}

type want struct {
	Action    v1alpha1.Action
	Conflicts []conflictView
	Message   string
	Removed   []string
	Retained  []retainedView
	Released  []string
	Managed   []entryView
}

func reportView(t *testing.T, r *conflict.Simulation) want {
	t.Helper()
	v := want{Action: r.Action, Message: r.Message}
	if r.Removed != nil {
		v.Removed = []string{}
	}
	for _, p := range r.Removed {
		v.Removed = append(v.Removed, p.APIServerString())
	}
	for _, c := range r.Conflicts {
		v.Conflicts = append(v.Conflicts, conflictView{Manager: c.Manager, Operation: string(c.Operation), Path: c.Path.APIServerString()})
		if r.Message != "" && !strings.Contains(r.Message, c.Path.APIServerString()) {
			t.Errorf("conflict at %s: not the path of the apiserver's message %q", c.Path, r.Message)
		}
	}
	for _, rt := range r.Retained {
		rv := retainedView{Path: rt.Path.APIServerString()}
		for _, o := range rt.Owners {
			rv.Owners = append(rv.Owners, o.Manager+" "+string(o.Operation))
		}
		v.Retained = append(v.Retained, rv)
	}
	for _, o := range r.Released {
		v.Released = append(v.Released, o.Manager+" "+string(o.Operation))
	}
	for _, e := range r.ManagedFields {
		set, err := ownership.DecodeEntry(e)
		if err != nil {
			t.Fatalf("managedFields of the result: %v", err)
		}
		ev := entryView{Manager: e.Manager, Operation: string(e.Operation), Subresource: e.Subresource, APIVersion: e.APIVersion}
		set.Iterate(func(p fieldpath.Path) { ev.Fields = append(ev.Fields, p.String()) })
		sort.Strings(ev.Fields)
		v.Managed = append(v.Managed, ev)
	}
	// The apiserver orders entries by operation, then time (to the
	// second), then manager: with times ignored, order as it does for
	// equal times.
	sort.SliceStable(v.Managed, func(i, j int) bool {
		p, q := v.Managed[i], v.Managed[j]
		if p.Operation != q.Operation {
			return p.Operation < q.Operation
		}
		if p.Manager != q.Manager {
			return p.Manager < q.Manager
		}
		return p.Subresource < q.Subresource
	})
	return v
}

func TestSimulate(t *testing.T) {
	tests := []struct {
		name    string
		ops     []operation
		applier string
		applied string
		force   bool
		want    want
	}{
		{
			name:    "create",
			applier: "platform",
			applied: webWith("nginx:1.27"),
			want: want{
				Action:  v1alpha1.ActionCreate,
				Managed: []entryView{{Manager: "platform", Operation: "Apply", APIVersion: "apps/v1", Fields: webFields}},
			},
		},
		{
			name: "an update of a field conflicts with the applier that set it before",
			ops: []operation{
				apply{Manager: "platform", Manifest: webWith("nginx:1.27")},
				update{Manager: "kubectl-edit", Mutate: func(u *unstructured.Unstructured) {
					c, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
					c[0].(map[string]any)["image"] = "nginx:1.28"
					_ = unstructured.SetNestedSlice(u.Object, c, "spec", "template", "spec", "containers")
				}},
			},
			applier: "platform",
			applied: webWith("nginx:1.27"),
			want: want{
				Action:    v1alpha1.ActionApply,
				Conflicts: []conflictView{{Manager: "kubectl-edit", Operation: "Update", Path: `.spec.template.spec.containers[name="web"].image`}},
				Message:   `Apply failed with 1 conflict: conflict with "kubectl-edit" using apps/v1: .spec.template.spec.containers[name="web"].image`,
				Managed: []entryView{
					{Manager: "platform", Operation: "Apply", APIVersion: "apps/v1", Fields: []string{
						".spec.selector",
						".spec.template.metadata.labels.app",
						`.spec.template.spec.containers[name="web"]`,
						`.spec.template.spec.containers[name="web"].name`,
					}},
					{Manager: "kubectl-edit", Operation: "Update", APIVersion: "apps/v1", Fields: []string{`.spec.template.spec.containers[name="web"].image`}},
				},
			},
		},
		{
			name: "appliers setting equal values share the field",
			ops: []operation{
				apply{Manager: "platform", Manifest: webWith("nginx:1.27")},
			},
			applier: "team",
			applied: fmt.Sprintf(imageOnly, "nginx:1.27"),
			want: want{
				Action: v1alpha1.ActionApply,
				Managed: []entryView{
					{Manager: "platform", Operation: "Apply", APIVersion: "apps/v1", Fields: webFields},
					{Manager: "team", Operation: "Apply", APIVersion: "apps/v1", Fields: imageFields},
				},
			},
		},
		{
			name: "a different value conflicts with every co-owner",
			ops: []operation{
				apply{Manager: "platform", Manifest: webWith("nginx:1.27")},
				apply{Manager: "team", Manifest: fmt.Sprintf(imageOnly, "nginx:1.27")},
			},
			applier: "ci",
			applied: fmt.Sprintf(imageOnly, "nginx:1.29"),
			want: want{
				Action: v1alpha1.ActionApply,
				Conflicts: []conflictView{
					{Manager: "platform", Operation: "Apply", Path: `.spec.template.spec.containers[name="web"].image`},
					{Manager: "team", Operation: "Apply", Path: `.spec.template.spec.containers[name="web"].image`},
				},
				Message: "Apply failed with 2 conflicts: conflicts with \"platform\":\n- .spec.template.spec.containers[name=\"web\"].image\nconflicts with \"team\":\n- .spec.template.spec.containers[name=\"web\"].image",
				Managed: []entryView{
					{Manager: "platform", Operation: "Apply", APIVersion: "apps/v1", Fields: webFields},
					{Manager: "team", Operation: "Apply", APIVersion: "apps/v1", Fields: imageFields},
				},
			},
		},
		{
			name: "force takes the field; a manager left with nothing is released",
			ops: []operation{
				apply{Manager: "platform", Manifest: webWith("nginx:1.27")},
				update{Manager: "kube-controller-manager", Mutate: set(int64(3), "spec", "replicas")},
			},
			applier: "platform",
			applied: fmt.Sprintf(replicas, 5),
			force:   true,
			want: want{
				Action:    v1alpha1.ActionApply,
				Conflicts: []conflictView{{Manager: "kube-controller-manager", Operation: "Update", Path: ".spec.replicas"}},
				// platform stops applying the template: nobody else owns it,
				// so the apply removes it (the top-most paths are listed).
				Removed: []string{
					".spec.selector",
					".spec.template.metadata.labels.app",
					`.spec.template.spec.containers[name="web"]`,
				},
				Released: []string{"kube-controller-manager Update"},
				Managed: []entryView{
					{Manager: "platform", Operation: "Apply", APIVersion: "apps/v1", Fields: []string{".spec.replicas"}},
				},
			},
		},
		{
			name: "without force the same apply fails and changes nothing",
			ops: []operation{
				apply{Manager: "platform", Manifest: webWith("nginx:1.27")},
				update{Manager: "kube-controller-manager", Mutate: set(int64(3), "spec", "replicas")},
			},
			applier: "platform",
			applied: fmt.Sprintf(replicas, 5),
			want: want{
				Action:    v1alpha1.ActionApply,
				Conflicts: []conflictView{{Manager: "kube-controller-manager", Operation: "Update", Path: ".spec.replicas"}},
				Message:   `Apply failed with 1 conflict: conflict with "kube-controller-manager" using apps/v1: .spec.replicas`,
				Managed: []entryView{
					{Manager: "platform", Operation: "Apply", APIVersion: "apps/v1", Fields: webFields},
					{Manager: "kube-controller-manager", Operation: "Update", APIVersion: "apps/v1", Fields: []string{".spec.replicas"}},
				},
			},
		},
		{
			name: "finalizers are a set: one item per owner, dropped items removed or retained",
			ops: []operation{
				apply{Manager: "a", Manifest: finalizers("example.com/a", "example.com/shared")},
				apply{Manager: "b", Manifest: finalizers("example.com/b", "example.com/shared")},
			},
			applier: "a",
			applied: finalizers("example.com/c"),
			want: want{
				Action:   v1alpha1.ActionApply,
				Removed:  []string{`.metadata.finalizers[="example.com/a"]`},
				Retained: []retainedView{{Path: `.metadata.finalizers[="example.com/shared"]`, Owners: []string{"b Apply"}}},
				Managed: []entryView{
					{Manager: "a", Operation: "Apply", APIVersion: "apps/v1", Fields: []string{`.metadata.finalizers[="example.com/c"]`}},
					{Manager: "b", Operation: "Apply", APIVersion: "apps/v1", Fields: []string{`.metadata.finalizers[="example.com/b"]`, `.metadata.finalizers[="example.com/shared"]`}},
				},
			},
		},
		{
			name: "the selector is atomic: a different label conflicts on the whole selector",
			ops: []operation{
				apply{Manager: "platform", Manifest: webWith("nginx:1.27")},
			},
			applier: "team",
			applied: selector("app: web", "tier: front"),
			want: want{
				Action:    v1alpha1.ActionApply,
				Conflicts: []conflictView{{Manager: "platform", Operation: "Apply", Path: ".spec.selector"}},
				Message:   `Apply failed with 1 conflict: conflict with "platform": .spec.selector`,
				Managed:   []entryView{{Manager: "platform", Operation: "Apply", APIVersion: "apps/v1", Fields: webFields}},
			},
		},
		{
			name: "the selector is atomic: the same selector is shared whole",
			ops: []operation{
				apply{Manager: "platform", Manifest: webWith("nginx:1.27")},
			},
			applier: "team",
			applied: selector("app: web"),
			want: want{
				Action: v1alpha1.ActionApply,
				Managed: []entryView{
					{Manager: "platform", Operation: "Apply", APIVersion: "apps/v1", Fields: webFields},
					{Manager: "team", Operation: "Apply", APIVersion: "apps/v1", Fields: []string{".spec.selector"}},
				},
			},
		},
		{
			name: "ports are keyed on containerPort and protocol",
			ops: []operation{
				apply{Manager: "a", Manifest: ports("{containerPort: 80, protocol: TCP, name: http}")},
				apply{Manager: "b", Manifest: ports("{containerPort: 80, protocol: UDP, name: dns}")},
			},
			applier: "b",
			applied: ports("{containerPort: 80, protocol: UDP, name: dns}", "{containerPort: 80, protocol: TCP, name: web}"),
			want: want{
				Action:    v1alpha1.ActionApply,
				Conflicts: []conflictView{{Manager: "a", Operation: "Apply", Path: `.spec.template.spec.containers[name="web"].ports[containerPort=80,protocol="TCP"].name`}},
				Message:   `Apply failed with 1 conflict: conflict with "a": .spec.template.spec.containers[name="web"].ports[containerPort=80,protocol="TCP"].name`,
				Managed: []entryView{
					{Manager: "a", Operation: "Apply", APIVersion: "apps/v1", Fields: portFields(`containerPort=80,protocol="TCP"`)},
					{Manager: "b", Operation: "Apply", APIVersion: "apps/v1", Fields: portFields(`containerPort=80,protocol="UDP"`)},
				},
			},
		},
		{
			name: "kubectl takes fields from client-side apply silently where live matches last-applied",
			ops: []operation{
				update{Manager: "kubectl-client-side-apply", Create: lastApplied("nginx:1.27")},
			},
			applier: "kubectl",
			applied: webWith("nginx:1.28"),
			want: want{
				Action: v1alpha1.ActionApply,
				// As the apiserver records it (checked against the test bed):
				// client-side apply keeps the annotation and the granular
				// labels map, and loses the image to kubectl.
				Managed: []entryView{
					{Manager: "kubectl", Operation: "Apply", APIVersion: "apps/v1", Fields: webFields},
					{Manager: "kubectl-client-side-apply", Operation: "Update", APIVersion: "apps/v1", Fields: []string{
						".metadata.annotations",
						".metadata.annotations.kubectl.kubernetes.io/last-applied-configuration",
						".spec.selector",
						".spec.template.metadata.labels",
						".spec.template.metadata.labels.app",
						`.spec.template.spec.containers[name="web"]`,
						`.spec.template.spec.containers[name="web"].name`,
					}},
				},
			},
		},
		{
			name: "another field manager gets the conflict kubectl is spared",
			ops: []operation{
				update{Manager: "kubectl-client-side-apply", Create: lastApplied("nginx:1.27")},
			},
			applier: "ci",
			applied: webWith("nginx:1.28"),
			want: want{
				Action:    v1alpha1.ActionApply,
				Conflicts: []conflictView{{Manager: "kubectl-client-side-apply", Operation: "Update", Path: `.spec.template.spec.containers[name="web"].image`}},
				Message:   `Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using apps/v1: .spec.template.spec.containers[name="web"].image`,
				Managed: []entryView{
					{Manager: "kubectl-client-side-apply", Operation: "Update", APIVersion: "apps/v1", Fields: []string{
						".metadata.annotations",
						".metadata.annotations.kubectl.kubernetes.io/last-applied-configuration",
						".spec.selector",
						".spec.template.metadata.labels",
						".spec.template.metadata.labels.app",
						`.spec.template.spec.containers[name="web"]`,
						`.spec.template.spec.containers[name="web"].image`,
						`.spec.template.spec.containers[name="web"].name`,
					}},
				},
			},
		},
		{
			name: "after a managedFields reset, before-first-apply owns everything",
			ops: []operation{
				apply{Manager: "platform", Manifest: webWith("nginx:1.27")},
				update{Manager: "resetter", Mutate: resetManagedFields},
			},
			applier: "platform",
			applied: webWith("nginx:1.28"),
			want: want{
				Action:    v1alpha1.ActionApply,
				Conflicts: []conflictView{{Manager: "before-first-apply", Operation: "Update", Path: `.spec.template.spec.containers[name="web"].image`}},
				Message:   `Apply failed with 1 conflict: conflict with "before-first-apply" using apps/v1: .spec.template.spec.containers[name="web"].image`,
				Managed:   []entryView{},
			},
		},
		{
			name: "after a managedFields reset, equal values are shared with before-first-apply",
			ops: []operation{
				apply{Manager: "platform", Manifest: webWith("nginx:1.27")},
				update{Manager: "resetter", Mutate: resetManagedFields},
			},
			applier: "platform",
			applied: webWith("nginx:1.27"),
			want: want{
				Action: v1alpha1.ActionApply,
				// As the apiserver records it (checked against the test bed):
				// no struct nodes (.spec, .spec.template, ...) and no list
				// node for containers.
				Managed: []entryView{
					{Manager: "platform", Operation: "Apply", APIVersion: "apps/v1", Fields: webFields},
					{Manager: "before-first-apply", Operation: "Update", APIVersion: "apps/v1", Fields: []string{
						".spec.selector",
						".spec.template.metadata.labels",
						".spec.template.metadata.labels.app",
						`.spec.template.spec.containers[name="web"]`,
						`.spec.template.spec.containers[name="web"].image`,
						`.spec.template.spec.containers[name="web"].name`,
					}},
				},
			},
		},
		{
			name: "a status update does not conflict with a main-resource apply",
			ops: []operation{
				apply{Manager: "platform", Manifest: webWith("nginx:1.27")},
				update{Manager: "kube-controller-manager", Subresource: "status", Mutate: set(int64(1), "status", "replicas")},
			},
			applier: "platform",
			applied: webWith("nginx:1.27"),
			want: want{
				Action: v1alpha1.ActionApply,
				Managed: []entryView{
					{Manager: "platform", Operation: "Apply", APIVersion: "apps/v1", Fields: webFields},
					{Manager: "kube-controller-manager", Operation: "Update", Subresource: "status", APIVersion: "apps/v1", Fields: []string{".status.replicas"}},
				},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &state{}
			for _, op := range tt.ops {
				op.Run(t, s)
			}
			in := conflict.Input{
				Live:         s.Live,
				Applied:      manifest(t, tt.applied),
				FieldManager: tt.applier,
				Force:        tt.force,
				Schema:       conflict.BuiltinSchema(),
				HasStatus:    true,
			}
			var liveBefore *unstructured.Unstructured
			if s.Live != nil {
				liveBefore = s.Live.DeepCopy()
			}
			r, err := conflict.Simulate(in)
			if err != nil {
				t.Fatal(err)
			}
			got := reportView(t, r)
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Simulate (-want +got):\n%s", diff)
			}
			if r.Kind != v1alpha1.ConflictReportKind || r.FieldManager != tt.applier || r.Force != tt.force {
				t.Errorf("report header: kind %q, fieldManager %q, force %v", r.Kind, r.FieldManager, r.Force)
			}
			if r.Object.Kind != "Deployment" || r.Object.Name != "web" || r.Object.Namespace != "shop" || r.Object.APIVersion != "apps/v1" {
				t.Errorf("report object %+v", r.Object)
			}
			if liveBefore != nil {
				if diff := cmp.Diff(liveBefore.Object, s.Live.Object); diff != "" {
					t.Errorf("Simulate changed the live object (-before +after):\n%s", diff)
				}
			}
		})
	}
}

func finalizers(items ...string) string {
	s := "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: shop\n  finalizers:\n"
	for _, f := range items {
		s += "  - " + f + "\n"
	}
	return s
}

func selector(labels ...string) string {
	s := "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: shop\nspec:\n  selector:\n    matchLabels:\n"
	for _, l := range labels {
		s += "      " + l + "\n"
	}
	return s
}

func ports(items ...string) string {
	s := "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: shop\nspec:\n  template:\n    spec:\n      containers:\n      - name: web\n        ports:\n"
	for _, p := range items {
		s += "        - " + p + "\n"
	}
	return s
}

func portFields(key string) []string {
	c := `.spec.template.spec.containers[name="web"]`
	p := c + ".ports[" + key + "]"
	return []string{c, c + ".name", p, p + ".containerPort", p + ".name", p + ".protocol"}
}

// lastApplied is the web Deployment as client-side kubectl apply creates
// it: with the last-applied annotation holding the manifest.
func lastApplied(image string) string {
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(webWith(image)), &obj.Object); err != nil {
		panic(err)
	}
	b, err := obj.MarshalJSON()
	if err != nil {
		panic(err)
	}
	obj.SetAnnotations(map[string]string{"kubectl.kubernetes.io/last-applied-configuration": string(b)})
	out, err := yaml.Marshal(obj.Object)
	if err != nil {
		panic(err)
	}
	return string(out)
}
