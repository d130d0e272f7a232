package defaults

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

func TestFinish(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"service without affinity", `{apiVersion: v1, kind: Service, spec: {sessionAffinityConfig: {clientIP: {timeoutSeconds: 10800}}}}`, `{apiVersion: v1, kind: Service, spec: {}}`},
		{"service with ClientIP", `{apiVersion: v1, kind: Service, spec: {sessionAffinity: ClientIP, sessionAffinityConfig: {clientIP: {timeoutSeconds: 5}}}}`, `{apiVersion: v1, kind: Service, spec: {sessionAffinity: ClientIP, sessionAffinityConfig: {clientIP: {timeoutSeconds: 5}}}}`},
		{"claim templates", `{apiVersion: apps/v1, kind: StatefulSet, spec: {volumeClaimTemplates: [{metadata: {name: d}}]}}`, `{apiVersion: apps/v1, kind: StatefulSet, spec: {volumeClaimTemplates: [{apiVersion: v1, kind: PersistentVolumeClaim, metadata: {name: d}}]}}`},
		{"limit range", `{apiVersion: v1, kind: LimitRange, spec: {limits: [{type: Container, max: {cpu: "2"}, min: {memory: 1Mi}, defaultRequest: {cpu: 100m}}, {type: Pod, max: {cpu: "4"}}]}}`,
			`{apiVersion: v1, kind: LimitRange, spec: {limits: [{type: Container, max: {cpu: "2"}, min: {memory: 1Mi}, default: {cpu: "2"}, defaultRequest: {cpu: 100m, memory: 1Mi}}, {type: Pod, max: {cpu: "4"}}]}}`},
		{"other kinds", `{apiVersion: v1, kind: ConfigMap, spec: {sessionAffinityConfig: {}}}`, `{apiVersion: v1, kind: ConfigMap, spec: {sessionAffinityConfig: {}}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var in, want map[string]any
			if err := yaml.Unmarshal([]byte(tc.in), &in); err != nil {
				t.Fatal(err)
			}
			if err := yaml.Unmarshal([]byte(tc.want), &want); err != nil {
				t.Fatal(err)
			}
			u := &unstructured.Unstructured{Object: in}
			Finish(u)
			if diff := cmp.Diff(want, u.Object); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}

func TestGenerated(t *testing.T) {
	obj := func(s string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(s), &u.Object); err != nil {
			t.Fatal(err)
		}
		return u
	}
	t.Run("job create", func(t *testing.T) {
		res := obj(`{apiVersion: batch/v1, kind: Job, metadata: {name: j}, spec: {template: {spec: {}}}}`)
		unknown, _ := Generated(nil, res)
		want := obj(`{apiVersion: batch/v1, kind: Job, metadata: {name: j, labels: {job-name: j, batch.kubernetes.io/job-name: j}}, spec: {selector: {matchLabels: {}}, template: {metadata: {labels: {job-name: j, batch.kubernetes.io/job-name: j}}, spec: {}}}}`)
		if diff := cmp.Diff(want.Object, res.Object); diff != "" {
			t.Errorf("(-want +got)\n%s", diff)
		}
		if len(unknown) != 5 {
			t.Errorf("unknown: %v", unknown)
		}
	})
	t.Run("job with a manual selector", func(t *testing.T) {
		res := obj(`{apiVersion: batch/v1, kind: Job, metadata: {name: j}, spec: {manualSelector: true, template: {spec: {}}}}`)
		if unknown, _ := Generated(nil, res); unknown != nil || res.GetLabels() != nil {
			t.Errorf("unknown %v, labels %v", unknown, res.GetLabels())
		}
	})
	ds := func(gen int64, image, ann string) *unstructured.Unstructured {
		u := obj(`{apiVersion: apps/v1, kind: DaemonSet, metadata: {name: d}, spec: {template: {spec: {containers: [{name: c, image: ` + image + `}]}}}}`)
		u.SetGeneration(gen)
		if ann != "" {
			u.SetAnnotations(map[string]string{templateGenerationAnnotation: ann})
		}
		return u
	}
	for _, tc := range []struct {
		name      string
		live, res *unstructured.Unstructured
		want      string
	}{
		{"daemonset create", nil, ds(0, "a", ""), "1"},
		{"daemonset template change", ds(3, "a", "3"), ds(0, "b", ""), "4"},
		{"daemonset same template", ds(3, "a", "2"), ds(0, "a", ""), "2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, known := Generated(tc.live, tc.res)
			if got := tc.res.GetAnnotations()[templateGenerationAnnotation]; got != tc.want || len(known) != 1 {
				t.Errorf("annotation %q, want %q; known %v", got, tc.want, known)
			}
		})
	}
}

func TestGeneratedNamespace(t *testing.T) {
	ns := func(finalizers ...any) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "shop"}}}
		if finalizers != nil {
			u.Object["spec"] = map[string]any{"finalizers": finalizers}
		}
		return u
	}
	created := ns()
	Generated(nil, created)
	if got := created.GetLabels()["kubernetes.io/metadata.name"]; got != "shop" {
		t.Errorf("label %q", got)
	}
	if f, _, _ := unstructured.NestedSlice(created.Object, "spec", "finalizers"); len(f) != 1 || f[0] != "kubernetes" {
		t.Errorf("create: finalizers %v", f)
	}
	updated := ns("example.com/x")
	Generated(ns("kubernetes"), updated)
	if f, _, _ := unstructured.NestedSlice(updated.Object, "spec", "finalizers"); len(f) != 1 || f[0] != "kubernetes" {
		t.Errorf("update: finalizers %v, want the stored ones", f)
	}
}

// A CRD's create starts its status afresh with the storage version
// stored; an update that moves the storage version adds it.
func TestGeneratedStoredVersions(t *testing.T) {
	crd := func(storage string) *unstructured.Unstructured {
		var versions []any
		for _, v := range []string{"v1", "v2"} {
			versions = append(versions, map[string]any{"name": v, "served": true, "storage": v == storage})
		}
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
			"metadata": map[string]any{"name": "things.example.com"}, "spec": map[string]any{"versions": versions},
			"status": map[string]any{"storedVersions": []any{"v0"}}}}
	}
	created := crd("v1")
	Generated(nil, created)
	if got, _, _ := unstructured.NestedStringSlice(created.Object, "status", "storedVersions"); len(got) != 1 || got[0] != "v1" {
		t.Errorf("create: storedVersions %v, want [v1]", got)
	}
	updated := crd("v2")
	unknown, _ := Generated(crd("v1"), updated)
	if got, _, _ := unstructured.NestedStringSlice(updated.Object, "status", "storedVersions"); len(got) != 2 || got[1] != "v2" || len(unknown) != 0 {
		t.Errorf("update: storedVersions %v (unknown %v), want [v0 v2]", got, unknown)
	}
}

// serviceAccount follows serviceAccountName, which wins, in every pod
// spec (an apply that changes the name changes the alias).
func TestFinishServiceAccountAlias(t *testing.T) {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "batch/v1", "kind": "CronJob",
		"spec": map[string]any{"jobTemplate": map[string]any{"spec": map[string]any{"template": map[string]any{
			"spec": map[string]any{"serviceAccountName": "robot", "serviceAccount": "default"}}}}}}}
	Finish(u)
	if sa, _, _ := unstructured.NestedString(u.Object, "spec", "jobTemplate", "spec", "template", "spec", "serviceAccount"); sa != "robot" {
		t.Errorf("serviceAccount %q, want robot", sa)
	}
}
