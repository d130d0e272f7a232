package helm

import "k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

// What Helm adds to every object of a release when it applies it
// (pkg/action/validate.go, setMetadataVisitor): none of it is in the
// release's manifest.
const (
	ManagedByLabel             = "app.kubernetes.io/managed-by"
	ManagedBy                  = "Helm"
	ReleaseNameAnnotation      = "meta.helm.sh/release-name"
	ReleaseNamespaceAnnotation = "meta.helm.sh/release-namespace"
)

// SetMetadata adds to obj the label and annotations Helm adds before it
// applies it, over any value the chart gave them, as Helm merges them.
// Without them a prediction of Helm's apply would remove them.
func SetMetadata(obj *unstructured.Unstructured, release, namespace string) {
	labels := obj.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[ManagedByLabel] = ManagedBy
	obj.SetLabels(labels)
	annotations := obj.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[ReleaseNameAnnotation] = release
	annotations[ReleaseNamespaceAnnotation] = namespace
	obj.SetAnnotations(annotations)
}
