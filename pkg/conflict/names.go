package conflict

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/validate/content"
	"k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// nameRule is how the apiserver validates a kind's metadata.name (each
// kind's ValidateObjectMeta name function in k8s.io/kubernetes'
// pkg/apis/*/validation, and NameIsDNSSubdomain for custom resources).
func nameRule(gk schema.GroupKind, custom bool) validation.ValidateNameFunc {
	switch gk {
	case schema.GroupKind{Kind: "Service"}:
		return validation.NameIsDNS1035Label
	case schema.GroupKind{Kind: "Namespace"}:
		return validation.ValidateNamespaceName
	case schema.GroupKind{Group: "apps", Kind: "StatefulSet"}:
		return validation.NameIsDNSLabel
	}
	if custom {
		return validation.NameIsDNSSubdomain
	}
	switch gk.Group {
	case "", "apps", "batch", "autoscaling", "policy", "networking.k8s.io", "storage.k8s.io", "scheduling.k8s.io",
		"coordination.k8s.io", "discovery.k8s.io", "node.k8s.io", "admissionregistration.k8s.io",
		"flowcontrol.apiserver.k8s.io", "resource.k8s.io", "apiextensions.k8s.io":
		return validation.NameIsDNSSubdomain
	}
	// RBAC, CertificateSigningRequests, aggregated APIs: a name that can
	// be a path segment.
	return func(name string, _ bool) []string { return content.IsPathSegmentName(name) }
}

// checkName refuses a name the apiserver refuses on create, with its
// words.
func checkName(gvk schema.GroupVersionKind, custom bool, namespace, name string) error {
	obj := gvk.Kind + "/" + name
	if namespace != "" {
		obj = gvk.Kind + "/" + namespace + "/" + name
	}
	if name == "" {
		return fmt.Errorf("%s: metadata.name is missing: an apply needs a name", obj)
	}
	if errs := nameRule(gvk.GroupKind(), custom)(name, false); len(errs) > 0 {
		return fmt.Errorf("%s: the apiserver refuses the name: %s: rename the object", obj, strings.Join(errs, "; "))
	}
	return nil
}
