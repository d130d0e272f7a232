package defaults

import (
	"strconv"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// Generated does what built-in kinds' storage strategies write into an
// object on create or update (k8s.io/kubernetes pkg/registry: not
// defaulting, which the tables hold): the values it can tell are set in
// result; the paths whose values only the apiserver knows (an object's
// UID) are returned as unknown; known are the paths the defaults tables
// call "depends" whose values this tells. live is nil on create.
func Generated(live, result *unstructured.Unstructured) (unknown, known []fieldpath.Path) {
	gv, kind := result.GroupVersionKind().GroupVersion(), result.GetKind()
	switch {
	case gv.Group == "batch" && kind == "Job" && live == nil:
		return jobSelector(result.Object, result.GetName()), nil
	case gv.Group == "" && kind == "Namespace":
		namespaceGenerated(live, result)
		return nil, nil
	case gv.Group == "" && gv.Version == "v1" && kind == "Pod" && live == nil:
		// The status starts afresh: what the tables say of a status's
		// fields is moot.
		return podCreated(result.Object), []fieldpath.Path{fieldpath.MakePathOrDie("status", "podIP")}
	case gv.Group == "" && kind == "PersistentVolume" && live == nil:
		// The strategy stamps the phase's transition with the time.
		return []fieldpath.Path{fieldpath.MakePathOrDie("status", "lastPhaseTransitionTime")}, nil
	case gv.Group == "apiextensions.k8s.io" && kind == "CustomResourceDefinition":
		storedVersions(live, result)
		// The status the tables call "depends" (its storedVersions).
		return nil, []fieldpath.Path{fieldpath.MakePathOrDie("status"), fieldpath.MakePathOrDie("status", "storedVersions")}
	case gv.Group == "certificates.k8s.io" && kind == "CertificateSigningRequest" && live == nil:
		// The strategy writes the requesting user's identity.
		return csrIdentity, nil
	case gv.Group == "apps" && gv.Version == "v1" && kind == "DaemonSet":
		templateGeneration(live, result)
		// The generation annotation is why the table's annotations
		// "depend".
		return nil, []fieldpath.Path{fieldpath.MakePathOrDie("metadata", "annotations")}
	}
	return nil, nil
}

// Labels of a Job's generated selector (pkg/apis/batch).
const (
	jobNameLabel          = "batch.kubernetes.io/job-name"
	legacyJobNameLabel    = "job-name"
	controllerUIDLabel    = "batch.kubernetes.io/controller-uid"
	legacyControllerLabel = "controller-uid"
)

// jobSelector: unless manualSelector, the Job strategy's generateSelector
// labels the template with the job's name and UID and selects the UID;
// defaulting copies the template's labels to a Job that has none.
func jobSelector(obj map[string]any, name string) []fieldpath.Path {
	spec, _ := obj["spec"].(map[string]any)
	if manual, _ := spec["manualSelector"].(bool); manual || spec == nil {
		return nil
	}
	template, _ := spec["template"].(map[string]any)
	if template == nil {
		return nil
	}
	tmeta, _ := template["metadata"].(map[string]any)
	if tmeta == nil {
		tmeta = map[string]any{}
		template["metadata"] = tmeta
	}
	labels, _ := tmeta["labels"].(map[string]any)
	if labels == nil {
		labels = map[string]any{}
		tmeta["labels"] = labels
	}
	for _, l := range []string{legacyJobNameLabel, jobNameLabel} {
		if _, set := labels[l]; !set {
			labels[l] = name
		}
	}
	selector, _ := spec["selector"].(map[string]any)
	if selector == nil {
		selector = map[string]any{}
		spec["selector"] = selector
	}
	if _, ok := selector["matchLabels"].(map[string]any); !ok {
		selector["matchLabels"] = map[string]any{}
	}
	unknown := []fieldpath.Path{fieldpath.MakePathOrDie("spec", "selector", "matchLabels", controllerUIDLabel)}
	for _, l := range []string{legacyControllerLabel, controllerUIDLabel} {
		if _, set := labels[l]; !set {
			unknown = append(unknown, fieldpath.MakePathOrDie("spec", "template", "metadata", "labels", l))
		}
	}
	meta, _ := obj["metadata"].(map[string]any)
	if own, _ := meta["labels"].(map[string]any); len(own) == 0 && meta != nil {
		copied := make(map[string]any, len(labels))
		for k, v := range labels {
			copied[k] = v
		}
		meta["labels"] = copied
		for _, l := range []string{legacyControllerLabel, controllerUIDLabel} {
			if _, set := labels[l]; !set {
				unknown = append(unknown, fieldpath.MakePathOrDie("metadata", "labels", l))
			}
		}
	}
	return unknown
}

// templateGeneration: the DaemonSet strategy sets templateGeneration,
// which apps/v1 shows as an annotation, to 1 on create and to the new
// generation when an update changes the template.
func templateGeneration(live, result *unstructured.Unstructured) {
	ann := result.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	switch {
	case live == nil:
		ann[templateGenerationAnnotation] = "1"
	case !SameJSON(nestedTemplate(live), nestedTemplate(result)):
		ann[templateGenerationAnnotation] = strconv.FormatInt(live.GetGeneration()+1, 10)
	default:
		v, ok := live.GetAnnotations()[templateGenerationAnnotation]
		if !ok {
			return
		}
		ann[templateGenerationAnnotation] = v
	}
	result.SetAnnotations(ann)
}

func nestedTemplate(u *unstructured.Unstructured) any {
	spec, _ := u.Object["spec"].(map[string]any)
	return spec["template"]
}

// namespaceGenerated: the Namespace strategy adds the kubernetes
// finalizer on create and keeps the stored finalizers on update (they are
// the namespace controller's); defaulting and Canonicalize label every
// namespace with its name.
func namespaceGenerated(live, result *unstructured.Unstructured) {
	labels := result.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels["kubernetes.io/metadata.name"] = result.GetName()
	result.SetLabels(labels)
	spec, _ := result.Object["spec"].(map[string]any)
	if spec == nil {
		spec = map[string]any{}
		result.Object["spec"] = spec
	}
	if live != nil {
		if f, ok, _ := unstructured.NestedFieldCopy(live.Object, "spec", "finalizers"); ok {
			spec["finalizers"] = f
		} else {
			delete(spec, "finalizers")
		}
		return
	}
	finalizers, _ := spec["finalizers"].([]any)
	for _, f := range finalizers {
		if f == "kubernetes" {
			return
		}
	}
	spec["finalizers"] = append(finalizers, "kubernetes")
}

// csrIdentity are the fields of a CSR the strategy fills from the user
// who creates it (the ones a user has: a uid and extra only some).
var csrIdentity = []fieldpath.Path{
	fieldpath.MakePathOrDie("spec", "extra"),
	fieldpath.MakePathOrDie("spec", "groups"),
	fieldpath.MakePathOrDie("spec", "uid"),
	fieldpath.MakePathOrDie("spec", "username"),
}

// storedVersions: the CRD strategy starts a new CRD's status afresh and
// records the storage version among status.storedVersions, on create
// and on every update.
func storedVersions(live, result *unstructured.Unstructured) {
	status, _ := result.Object["status"].(map[string]any)
	if live == nil || status == nil {
		status = map[string]any{"acceptedNames": map[string]any{"kind": "", "plural": ""}, "conditions": nil}
		if old, ok := result.Object["status"].(map[string]any); ok && live == nil {
			if names, ok := old["acceptedNames"]; ok {
				status["acceptedNames"] = names
			}
		}
		result.Object["status"] = status
	}
	versions, _, _ := unstructured.NestedSlice(result.Object, "spec", "versions")
	for _, v := range versions {
		m, _ := v.(map[string]any)
		if storage, _ := m["storage"].(bool); !storage {
			continue
		}
		stored, _ := status["storedVersions"].([]any)
		for _, s := range stored {
			if s == m["name"] {
				return
			}
		}
		status["storedVersions"] = append(stored, m["name"])
		return
	}
}
