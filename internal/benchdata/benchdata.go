package benchdata

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/value"
)

// Time is the time of every managedFields entry.
var Time = metav1.NewTime(time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC))

func key(i int) string { return fmt.Sprintf("key-%05d.conf", i) }

// ConfigMapManifest is the ConfigMap big with keys data keys, as applied;
// changed keys get the value "changed".
func ConfigMapManifest(keys int, changed ...int) *unstructured.Unstructured {
	data := make(map[string]any, keys)
	for i := 0; i < keys; i++ {
		data[key(i)] = fmt.Sprintf("value %d", i)
	}
	for _, i := range changed {
		data[key(i)] = "changed"
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1",
		"kind":       "ConfigMap",
		"metadata": map[string]any{
			"name":      "big",
			"namespace": "default",
			"labels":    map[string]any{"app.kubernetes.io/name": "big"},
		},
		"data": data,
	}}
}

// ConfigMap is the live ConfigMap: helm applied every key, argocd-controller
// applies every fifth key with the same value (shared), and kubectl-patch
// added ten keys nobody applies.
func ConfigMap(keys int) *unstructured.Unstructured {
	u := ConfigMapManifest(keys)
	data := u.Object["data"].(map[string]any)
	helm, argo, patch := &fieldpath.Set{}, &fieldpath.Set{}, &fieldpath.Set{}
	helm.Insert(fieldpath.MakePathOrDie("metadata", "labels", "app.kubernetes.io/name"))
	for i := 0; i < keys; i++ {
		p := fieldpath.MakePathOrDie("data", key(i))
		helm.Insert(p)
		if i%5 == 0 {
			argo.Insert(p)
		}
	}
	for i := keys; i < keys+10; i++ {
		data[key(i)] = "patched"
		patch.Insert(fieldpath.MakePathOrDie("data", key(i)))
	}
	setLive(u, "6c8d7e2a-0000-4000-8000-00000000c0f1",
		entry("helm", metav1.ManagedFieldsOperationApply, "", helm),
		entry("argocd-controller", metav1.ManagedFieldsOperationApply, "", argo),
		entry("kubectl-patch", metav1.ManagedFieldsOperationUpdate, "", patch),
	)
	return u
}

func container(i int, image string) map[string]any {
	return map[string]any{
		"name":  fmt.Sprintf("c%02d", i),
		"image": image,
		"args":  []any{"serve", fmt.Sprintf("--port=%d", 8000+i)},
		"ports": []any{
			map[string]any{"containerPort": int64(8000 + i), "protocol": "TCP", "name": fmt.Sprintf("http-%d", i)},
			map[string]any{"containerPort": int64(9000 + i), "protocol": "TCP", "name": fmt.Sprintf("metrics-%d", i)},
		},
		"env": []any{
			map[string]any{"name": "MODE", "value": "production"},
			map[string]any{"name": "INDEX", "value": fmt.Sprint(i)},
			map[string]any{"name": "LOG_LEVEL", "value": "info"},
		},
		"resources": map[string]any{
			"limits":   map[string]any{"cpu": "500m", "memory": "256Mi"},
			"requests": map[string]any{"cpu": "100m", "memory": "128Mi"},
		},
	}
}

// DeploymentManifest is the Deployment wide with containers containers, as
// applied; the containers whose index is in changed get image
// "nginx:changed".
func DeploymentManifest(containers int, changed ...int) *unstructured.Unstructured {
	image := make([]string, containers)
	for i := range image {
		image[i] = "nginx:1.27"
	}
	for _, i := range changed {
		image[i] = "nginx:changed"
	}
	list := make([]any, containers)
	for i := range list {
		list[i] = container(i, image[i])
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1",
		"kind":       "Deployment",
		"metadata": map[string]any{
			"name":      "wide",
			"namespace": "default",
			"labels":    map[string]any{"app.kubernetes.io/name": "wide"},
		},
		"spec": map[string]any{
			"selector": map[string]any{"matchLabels": map[string]any{"app.kubernetes.io/name": "wide"}},
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"app.kubernetes.io/name": "wide"}},
				"spec":     map[string]any{"containers": list},
			},
		},
	}}
}

// Deployment is the live Deployment: platform applied it, team applies the
// same images (shared), kubectl scaled it through /scale and
// kube-controller-manager wrote its status.
func Deployment(containers int) *unstructured.Unstructured {
	u := DeploymentManifest(containers)
	u.Object["spec"].(map[string]any)["replicas"] = int64(3)
	u.Object["status"] = map[string]any{"replicas": int64(3), "readyReplicas": int64(3), "observedGeneration": int64(2)}
	platform, team := &fieldpath.Set{}, &fieldpath.Set{}
	platform.Insert(fieldpath.MakePathOrDie("metadata", "labels", "app.kubernetes.io/name"))
	platform.Insert(fieldpath.MakePathOrDie("spec", "selector"))
	platform.Insert(fieldpath.MakePathOrDie("spec", "template", "metadata", "labels", "app.kubernetes.io/name"))
	for i := 0; i < containers; i++ {
		c := fieldpath.MakePathOrDie("spec", "template", "spec", "containers", keyed("name", fmt.Sprintf("c%02d", i)))
		platform.Insert(c)
		for _, f := range []string{"name", "image", "args"} {
			platform.Insert(append(c.Copy(), fieldpath.PathElement{FieldName: &f}))
		}
		for _, port := range []int64{int64(8000 + i), int64(9000 + i)} {
			p := append(c.Copy(), field("ports"), keyed("containerPort", port, "protocol", "TCP"))
			platform.Insert(p)
			for _, f := range []string{"containerPort", "protocol", "name"} {
				platform.Insert(append(p.Copy(), field(f)))
			}
		}
		for _, name := range []string{"MODE", "INDEX", "LOG_LEVEL"} {
			e := append(c.Copy(), field("env"), keyed("name", name))
			platform.Insert(e)
			platform.Insert(append(e.Copy(), field("name")))
			platform.Insert(append(e.Copy(), field("value")))
		}
		for _, r := range []string{"limits", "requests"} {
			for _, q := range []string{"cpu", "memory"} {
				platform.Insert(append(c.Copy(), field("resources"), field(r), field(q)))
			}
		}
		team.Insert(c)
		team.Insert(append(c.Copy(), field("name")))
		team.Insert(append(c.Copy(), field("image")))
	}
	scale := fieldpath.NewSet(fieldpath.MakePathOrDie("spec", "replicas"))
	status := fieldpath.NewSet(
		fieldpath.MakePathOrDie("status", "replicas"),
		fieldpath.MakePathOrDie("status", "readyReplicas"),
		fieldpath.MakePathOrDie("status", "observedGeneration"),
	)
	setLive(u, "6c8d7e2a-0000-4000-8000-0000000de910",
		entry("platform", metav1.ManagedFieldsOperationApply, "", platform),
		entry("team", metav1.ManagedFieldsOperationApply, "", team),
		entry("kubectl", metav1.ManagedFieldsOperationUpdate, "scale", scale),
		entry("kube-controller-manager", metav1.ManagedFieldsOperationUpdate, "status", status),
	)
	return u
}

func field(name string) fieldpath.PathElement { return fieldpath.PathElement{FieldName: &name} }

func keyed(kv ...any) fieldpath.PathElement {
	fields := make(value.FieldList, 0, len(kv)/2)
	for i := 0; i < len(kv); i += 2 {
		fields = append(fields, value.Field{Name: kv[i].(string), Value: value.NewValueInterface(kv[i+1])})
	}
	fields.Sort()
	return fieldpath.PathElement{Key: &fields}
}

type managed struct {
	manager     string
	op          metav1.ManagedFieldsOperationType
	subresource string
	set         *fieldpath.Set
}

func entry(manager string, op metav1.ManagedFieldsOperationType, subresource string, set *fieldpath.Set) managed {
	return managed{manager, op, subresource, set}
}

func setLive(u *unstructured.Unstructured, uid string, entries ...managed) {
	u.SetUID(types.UID(uid))
	u.SetResourceVersion("1234")
	u.SetGeneration(2)
	u.SetCreationTimestamp(Time)
	var out []metav1.ManagedFieldsEntry
	for _, e := range entries {
		raw, err := e.set.ToJSON()
		if err != nil {
			panic(err)
		}
		out = append(out, metav1.ManagedFieldsEntry{
			Manager:     e.manager,
			Operation:   e.op,
			Subresource: e.subresource,
			APIVersion:  u.GetAPIVersion(),
			Time:        &Time,
			FieldsType:  "FieldsV1",
			FieldsV1:    metav1.NewFieldsV1(string(raw)),
		})
	}
	u.SetManagedFields(out)
}

// ManyManagers is the ConfigMap many with managers Apply entries, as many
// appliers leave it (the apiserver does not cap them): manager-i applied
// the key key-i alone, and all of them the label.
func ManyManagers(managers int) *unstructured.Unstructured {
	data := make(map[string]any, managers)
	for i := 0; i < managers; i++ {
		data[key(i)] = fmt.Sprintf("value %d", i)
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1",
		"kind":       "ConfigMap",
		"metadata": map[string]any{
			"name":      "many",
			"namespace": "default",
			"labels":    map[string]any{"app.kubernetes.io/name": "many"},
		},
		"data": data,
	}}
	entries := make([]managed, managers)
	for i := range entries {
		set := fieldpath.NewSet(
			fieldpath.MakePathOrDie("metadata", "labels", "app.kubernetes.io/name"),
			fieldpath.MakePathOrDie("data", key(i)),
		)
		entries[i] = entry(fmt.Sprintf("manager-%05d", i), metav1.ManagedFieldsOperationApply, "", set)
	}
	setLive(u, "6c8d7e2a-0000-4000-8000-0000000aa001", entries...)
	return u
}
