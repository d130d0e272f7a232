package kube

import (
	"context"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	metadatafake "k8s.io/client-go/metadata/fake"
	clienttesting "k8s.io/client-go/testing"

	"github.com/kubectl-ssa/kubectl-ssa/internal/helm"
	"github.com/kubectl-ssa/kubectl-ssa/internal/testkit"
)

// helmValue is the "release" value of a storage object as Helm writes
// it: base64 of the gzipped JSON.
func helmValue(t *testing.T, name string, revision int, status string) string {
	t.Helper()
	v, err := testkit.HelmRelease(map[string]any{
		"name": name, "namespace": "shop", "version": revision, "info": map[string]any{"status": status},
		"manifest": fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s-v%d\n", name, revision),
	})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// storageObject is a revision's Secret (its data base64 once more, as
// the API serves a Secret's data) or ConfigMap, labelled as Helm labels it.
func storageObject(kind, name string, revision int, status, value string) *unstructured.Unstructured {
	if kind == "Secret" {
		value = base64.StdEncoding.EncodeToString([]byte(value))
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": kind,
		"metadata": map[string]any{
			"name": helm.ObjectName(name, revision), "namespace": "shop",
			"labels": map[string]any{"owner": "helm", "name": name, "status": status, "version": strconv.Itoa(revision)},
		},
		"data": map[string]any{"release": value},
	}}
	if kind == "Secret" {
		u.Object["type"] = helm.SecretType
	}
	return u
}

// helmCluster serves objs through fake dynamic and metadata clients.
func helmCluster(t *testing.T, objs ...*unstructured.Unstructured) *Cluster {
	t.Helper()
	var dyn, md []runtime.Object
	for _, o := range objs {
		dyn = append(dyn, o)
		md = append(md, &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: o.GetKind()},
			ObjectMeta: metav1.ObjectMeta{Name: o.GetName(), Namespace: o.GetNamespace(), Labels: o.GetLabels()}})
	}
	scheme := runtime.NewScheme()
	if err := metav1.AddMetaToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	lists := map[schema.GroupVersionResource]string{
		{Version: "v1", Resource: "secrets"}:    "SecretList",
		{Version: "v1", Resource: "configmaps"}: "ConfigMapList",
	}
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, meta.RESTScopeNamespace)
	mapper.Add(schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"}, meta.RESTScopeRoot)
	return &Cluster{
		Dynamic:  dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), lists, dyn...),
		Metadata: metadatafake.NewSimpleMetadataClient(scheme, md...),
		Mapper:   mapper, Namespace: "shop",
	}
}

func TestReadHelmRelease(t *testing.T) {
	type rev struct {
		n      int
		status string
	}
	tests := []struct {
		name     string
		storage  HelmStorage
		revs     []rev
		corrupt  int
		release  string
		revision int
		want     string // Object read
		wantErr  string
	}{
		{name: "the deployed revision, not the latest", revs: []rev{{1, "superseded"}, {2, "deployed"}, {3, "failed"}}, release: "web",
			want: "Secret/shop/sh.helm.release.v1.web.v2"},
		{name: "several deployed: the highest, as Helm takes it", revs: []rev{{2, "deployed"}, {4, "deployed"}, {3, "superseded"}}, release: "web",
			want: "Secret/shop/sh.helm.release.v1.web.v4"},
		{name: "a revision asked for", revs: []rev{{1, "superseded"}, {2, "deployed"}}, release: "web", revision: 1,
			want: "Secret/shop/sh.helm.release.v1.web.v1"},
		{name: "ConfigMaps with HELM_DRIVER=configmap", storage: HelmConfigMaps, revs: []rev{{1, "deployed"}}, release: "web",
			want: "ConfigMap/shop/sh.helm.release.v1.web.v1"},
		{name: "another release's Secrets are not it", revs: []rev{{1, "deployed"}}, release: "api",
			wantErr: `helm release "api" not found in namespace "shop" (no Secret labelled name=api,owner=helm): check the release name and -n (and HELM_DRIVER=configmap for a release Helm stores in ConfigMaps); kubectl get secrets -A -l owner=helm lists the releases`},
		{name: "no deployed revision", revs: []rev{{1, "superseded"}, {3, "failed"}, {2, "failed"}}, release: "web",
			wantErr: `helm release "web" in namespace "shop" has no deployed revision (its revisions: 3 failed, 2 failed, 1 superseded): give one with --helm-revision`},
		{name: "no such revision", revs: []rev{{1, "superseded"}, {2, "deployed"}}, release: "web", revision: 7,
			wantErr: `helm release "web" in namespace "shop" has no revision 7 (its revisions: 2 deployed, 1 superseded): give one of them with --helm-revision`},
		{name: "undecodable", revs: []rev{{2, "deployed"}}, corrupt: 2, release: "web",
			wantErr: "Secret/shop/sh.helm.release.v1.web.v2: cannot decode the helm release it holds: not gzip: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			storage := tt.storage
			if storage == "" {
				storage = HelmSecrets
			}
			var objs []*unstructured.Unstructured
			for _, r := range tt.revs {
				v := helmValue(t, "web", r.n, r.status)
				if r.n == tt.corrupt {
					raw, _ := base64.StdEncoding.DecodeString(v)
					v = base64.StdEncoding.EncodeToString(raw[:len(raw)/2])
				}
				objs = append(objs, storageObject(string(storage), "web", r.n, r.status, v))
			}
			c := helmCluster(t, objs...)
			got, err := c.ReadHelmRelease(context.Background(), storage, "shop", tt.release, tt.revision)
			if tt.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) {
					t.Fatalf("got %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Object != tt.want {
				t.Errorf("read %s, want %s", got.Object, tt.want)
			}
			if want := fmt.Sprintf("sh.helm.release.v1.web.v%d", got.Version); !strings.HasSuffix(tt.want, want) {
				t.Errorf("decoded revision %d from %s", got.Version, tt.want)
			}
		})
	}
}

// TestAsHelmApplies: the objects of a release are sent as Helm sends
// them: in the release's namespace when namespaced and without one, with
// Helm's label and annotations.
func TestAsHelmApplies(t *testing.T) {
	c := helmCluster(t)
	r := &HelmRelease{Release: &helm.Release{Name: "web", Namespace: "shop", Version: 2, Manifest: `---
# Source: web/templates/cm.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  labels: {app: web}
---
# Source: web/templates/other.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: elsewhere
  namespace: kube-system
---
# Source: web/templates/role.yaml
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: web-reader
`}}
	ms, err := HelmManifests(r)
	if err != nil {
		t.Fatal(err)
	}
	c.AsHelmApplies(ms, r, "ignored")
	type view struct {
		Name, Namespace, Source string
		Labels, Annotations     map[string]string
	}
	helmAnns := map[string]string{helm.ReleaseNameAnnotation: "web", helm.ReleaseNamespaceAnnotation: "shop"}
	want := []view{
		{Name: "settings", Namespace: "shop", Labels: map[string]string{"app": "web", helm.ManagedByLabel: "Helm"}, Annotations: helmAnns},
		{Name: "elsewhere", Namespace: "kube-system", Labels: map[string]string{helm.ManagedByLabel: "Helm"}, Annotations: helmAnns},
		{Name: "web-reader", Labels: map[string]string{helm.ManagedByLabel: "Helm"}, Annotations: helmAnns},
	}
	var got []view
	for _, m := range ms {
		got = append(got, view{m.Object.GetName(), m.Object.GetNamespace(), m.Source, m.Object.GetLabels(), m.Object.GetAnnotations()})
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}

	r.Manifest = "---\n# Source: web/templates/empty.yaml\n"
	if _, err := HelmManifests(r); err == nil || err.Error() != "helm release web revision 2 has an empty manifest (a chart of hooks only?): nothing to compare" {
		t.Errorf("an empty manifest: %v", err)
	}
}

func TestHelmReleaseNames(t *testing.T) {
	c := helmCluster(t,
		storageObject("Secret", "web", 1, "superseded", "x"), storageObject("Secret", "web", 2, "deployed", "x"),
		storageObject("Secret", "api", 1, "deployed", "x"))
	got, err := c.HelmReleaseNames(context.Background(), HelmSecrets, "shop")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"api", "web"}, got); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
}

// TestReadHelmReleaseCrafted: storage objects anyone who may create
// Secrets can write. Only the revision the command needs is read (its
// metadata chose it), and it must be what its name says.
func TestReadHelmReleaseCrafted(t *testing.T) {
	release := func(rel map[string]any) string {
		v, err := testkit.HelmRelease(rel)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	bomb, err := testkit.HelmPadded(`{"name":"web","namespace":"shop","version":9,"manifest":"`, 64<<20, `"}`)
	if err != nil {
		t.Fatal(err)
	}
	renamed := func(u *unstructured.Unstructured, name string) *unstructured.Unstructured {
		u.SetName(name)
		return u
	}
	tests := []struct {
		name     string
		objs     []*unstructured.Unstructured
		revision int
		want     string   // Object read
		gets     []string // the objects read whole
		wantErr  string
	}{
		{
			name: "ten deployed: only the highest is read",
			objs: func() []*unstructured.Unstructured {
				var out []*unstructured.Unstructured
				for n := 1; n <= 9; n++ {
					out = append(out, storageObject("Secret", "web", n, "deployed", "not read"))
				}
				return append(out, storageObject("Secret", "web", 10, "deployed", helmValue(t, "web", 10, "deployed")))
			}(),
			want: "Secret/shop/sh.helm.release.v1.web.v10", gets: []string{"sh.helm.release.v1.web.v10"},
		},
		{
			name: "the deployed one and the failed one after it, nothing else",
			objs: []*unstructured.Unstructured{
				storageObject("Secret", "web", 1, "superseded", "not read"),
				storageObject("Secret", "web", 2, "deployed", helmValue(t, "web", 2, "deployed")),
				storageObject("Secret", "web", 3, "failed", helmValue(t, "web", 3, "failed")),
			},
			want: "Secret/shop/sh.helm.release.v1.web.v2", gets: []string{"sh.helm.release.v1.web.v2", "sh.helm.release.v1.web.v3"},
		},
		{
			name:    "a zero bomb",
			objs:    []*unstructured.Unstructured{storageObject("Secret", "web", 9, "deployed", bomb)},
			gets:    []string{"sh.helm.release.v1.web.v9"},
			wantErr: "Secret/shop/sh.helm.release.v1.web.v9: cannot decode the helm release it holds: larger than 16 MiB once decompressed",
		},
		{
			name: "the release inside names another",
			objs: []*unstructured.Unstructured{storageObject("Secret", "web", 2, "deployed", helmValue(t, "api", 2, "deployed"))},
			gets: []string{"sh.helm.release.v1.web.v2"},
			wantErr: `Secret/shop/sh.helm.release.v1.web.v2: the release inside is named "api", not "web" as the object is: Helm did not write it; ` +
				"delete it, or give another revision with --helm-revision",
		},
		{
			name:    "the release inside is another revision",
			objs:    []*unstructured.Unstructured{storageObject("Secret", "web", 2, "deployed", helmValue(t, "web", 7, "deployed"))},
			wantErr: "Secret/shop/sh.helm.release.v1.web.v2: the release inside is revision 7, not 2 as the object's name says",
		},
		{
			name: "the release inside is in another namespace",
			objs: []*unstructured.Unstructured{storageObject("Secret", "web", 2, "deployed", release(map[string]any{
				"name": "web", "namespace": "kube-system", "version": 2, "manifest": "kind: ConfigMap\n"}))},
			wantErr: `Secret/shop/sh.helm.release.v1.web.v2: the release inside is in namespace "kube-system", not in the object's "shop"`,
		},
		{
			name: "labelled as the highest revision, but not named so",
			objs: []*unstructured.Unstructured{
				storageObject("Secret", "web", 2, "deployed", helmValue(t, "web", 2, "deployed")),
				renamed(storageObject("Secret", "web", 5, "deployed", helmValue(t, "web", 5, "deployed")), "web-release"),
			},
			wantErr: `Secret/shop/web-release is labelled as revision 5 of helm release "web", but Helm names that revision sh.helm.release.v1.web.v5: ` +
				"Helm did not write it; delete it, or give another revision with --helm-revision",
		},
		{
			name: "a revision asked for whose labels say another",
			objs: []*unstructured.Unstructured{renamed(storageObject("Secret", "web", 5, "deployed", helmValue(t, "web", 5, "deployed")),
				"sh.helm.release.v1.web.v3")},
			revision: 3,
			wantErr:  "Secret/shop/sh.helm.release.v1.web.v3: its label version=5 is another revision than its name's 3: Helm did not write it",
		},
		{
			name:     "a revision asked for, checked as well",
			objs:     []*unstructured.Unstructured{storageObject("Secret", "web", 3, "superseded", helmValue(t, "other", 3, "superseded"))},
			revision: 3,
			wantErr:  `Secret/shop/sh.helm.release.v1.web.v3: the release inside is named "other", not "web" as the object is`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := helmCluster(t, tt.objs...)
			got, err := c.ReadHelmRelease(context.Background(), HelmSecrets, "shop", "web", tt.revision)
			if tt.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) {
					t.Fatalf("got %v, want %q", err, tt.wantErr)
				}
			} else if err != nil {
				t.Fatal(err)
			} else if got.Object != tt.want {
				t.Errorf("read %s, want %s", got.Object, tt.want)
			}
			if tt.gets == nil {
				return
			}
			var gets []string
			for _, a := range c.Dynamic.(*dynamicfake.FakeDynamicClient).Actions() {
				switch a := a.(type) {
				case clienttesting.GetAction:
					gets = append(gets, a.GetName())
				default:
					t.Errorf("a %s of %s: the objects are chosen from their metadata", a.GetVerb(), a.GetResource().Resource)
				}
			}
			if diff := cmp.Diff(tt.gets, gets); diff != "" {
				t.Errorf("objects read whole (-want +got)\n%s", diff)
			}
		})
	}
}

// TestHelmManifestsRefused: a manifest no Helm release has is refused
// before it costs a diff, naming the storage object.
func TestHelmManifestsRefused(t *testing.T) {
	cm := func(name, ns string) string {
		s := "---\n# Source: web/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\n"
		if ns != "" {
			s += "  namespace: " + ns + "\n"
		}
		return s
	}
	var many, list strings.Builder
	for i := 0; i <= helm.MaxObjects; i++ {
		many.WriteString(cm(fmt.Sprintf("c%d", i), ""))
	}
	list.WriteString("---\napiVersion: v1\nkind: List\nitems:\n")
	for i := 0; i <= helm.MaxObjects; i++ {
		fmt.Fprintf(&list, "- {apiVersion: v1, kind: ConfigMap, metadata: {name: c%d}}\n", i)
	}
	const where = "Secret/shop/sh.helm.release.v1.web.v2: "
	const todo = ": Helm did not write it; delete it, or give another revision with --helm-revision"
	tests := []struct {
		name, manifest, want string
	}{
		{"a chart's render", cm("a", "") + cm("b", "") + cm("a", "kube-system"), ""},
		{"too many objects", many.String(), where + "its manifest has 3001 documents, more than the 3000 objects kubectl-ssa reads of a release (charts render a few hundred): " +
			"delete it if Helm did not write it, or give another revision with --helm-revision"},
		{"too many objects in a List", list.String(), where + "its manifest has 3001 objects, more than the 3000 kubectl-ssa reads of a release: " +
			"delete it if Helm did not write it, or give another revision with --helm-revision"},
		{"an object twice", cm("a", "") + cm("b", "") + cm("a", ""), where + "its manifest has ConfigMap/shop/a twice, which helm install refuses" + todo},
		{"twice, once in the release's namespace by name", cm("a", "") + cm("a", "shop"), where + "its manifest has ConfigMap/shop/a twice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &HelmRelease{Release: &helm.Release{Name: "web", Namespace: "shop", Version: 2, Manifest: tt.manifest}, Object: "Secret/shop/sh.helm.release.v1.web.v2"}
			_, err := HelmManifests(r)
			if tt.want == "" && err != nil {
				t.Fatal(err)
			}
			if tt.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tt.want)) {
				t.Fatalf("got %v, want %q", err, tt.want)
			}
		})
	}
}
