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

	"github.com/kubectl-ssa/kubectl-ssa/internal/helm"
	"github.com/kubectl-ssa/kubectl-ssa/internal/testkit"
)

// helmValue is the "release" value of a storage object as Helm writes
// it: base64 of the gzipped JSON.
func helmValue(t *testing.T, name string, revision int, status string) string {
	t.Helper()
	v, err := testkit.HelmRelease(map[string]interface{}{
		"name": name, "namespace": "shop", "version": revision, "info": map[string]interface{}{"status": status},
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
	u := &unstructured.Unstructured{Object: map[string]interface{}{
		"apiVersion": "v1", "kind": kind,
		"metadata": map[string]interface{}{
			"name": helm.ObjectName(name, revision), "namespace": "shop",
			"labels": map[string]interface{}{"owner": "helm", "name": name, "status": status, "version": strconv.Itoa(revision)},
		},
		"data": map[string]interface{}{"release": value},
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
