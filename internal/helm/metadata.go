package helm

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// What Helm adds to every object of a release when it applies it
// (pkg/action/validate.go, setMetadataVisitor): none of it is in the
// release's manifest.
const (
	ManagedByLabel             = "app.kubernetes.io/managed-by"
	ManagedBy                  = "Helm"
	ReleaseNameAnnotation      = "meta.helm.sh/release-name"
	ReleaseNamespaceAnnotation = "meta.helm.sh/release-namespace"
	// ResourcePolicyAnnotation "keep" keeps an object an upgrade or an
	// uninstall would delete.
	ResourcePolicyAnnotation = "helm.sh/resource-policy"
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

// CheckOwnership is Helm's check of an object a release is about to
// create that exists already (pkg/action/validate.go, checkOwnership):
// Helm adopts it only when its label and annotations name the release,
// and otherwise fails the install or upgrade with this message (unless
// given --take-ownership). "" when Helm adopts it.
func CheckOwnership(live *unstructured.Unstructured, release, namespace string) string {
	var errs []string
	if err := requireValue(live.GetLabels(), ManagedByLabel, ManagedBy); err != "" {
		errs = append(errs, "label validation error: "+err)
	}
	annotations := live.GetAnnotations()
	if err := requireValue(annotations, ReleaseNameAnnotation, release); err != "" {
		errs = append(errs, "annotation validation error: "+err)
	}
	if err := requireValue(annotations, ReleaseNamespaceAnnotation, namespace); err != "" {
		errs = append(errs, "annotation validation error: "+err)
	}
	if len(errs) == 0 {
		return ""
	}
	return fmt.Sprintf("%s %q in namespace %q exists and cannot be imported into the current release: invalid ownership metadata; %s",
		live.GetKind(), live.GetName(), live.GetNamespace(), strings.Join(errs, "; "))
}

func requireValue(meta map[string]string, k, v string) string {
	actual, ok := meta[k]
	if !ok {
		return fmt.Sprintf("missing key %q: must be set to %q", k, v)
	}
	if actual != v {
		return fmt.Sprintf("key %q must equal %q: current value is %q", k, v, actual)
	}
	return ""
}
