package conflict

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/validate/content"
	"k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/defaults"
)

// nameRule is how an apiserver of the given minor (0: the newest
// known) validates a kind's metadata.name on create (each kind's
// ValidateObjectMeta name function in k8s.io/kubernetes'
// pkg/apis/*/validation, and NameIsDNSSubdomain for custom resources).
func nameRule(gk schema.GroupKind, custom bool, minor int) validation.ValidateNameFunc {
	pathSegment := func(name string, _ bool) []string { return content.IsPathSegmentName(name) }
	switch gk {
	case schema.GroupKind{Kind: "Service"}:
		if minor != 0 && minor < relaxedServiceNames {
			return validation.NameIsDNS1035Label
		}
		return validation.NameIsDNSLabel
	case schema.GroupKind{Kind: "Event"}:
		// core/v1 Events keep the legacy validation, which checks no
		// name (events.k8s.io's are DNS subdomains).
		return pathSegment
	case schema.GroupKind{Group: "networking.k8s.io", Kind: "IPAddress"}:
		return func(name string, _ bool) []string {
			var out []string
			for _, e := range utilvalidation.IsValidIP(&field.Path{}, name) {
				out = append(out, e.Detail)
			}
			return out
		}
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
		"flowcontrol.apiserver.k8s.io", "resource.k8s.io", "apiextensions.k8s.io", "events.k8s.io", "storagemigration.k8s.io":
		return validation.NameIsDNSSubdomain
	}
	// RBAC, CertificateSigningRequests, aggregated APIs: a name that can
	// be a path segment.
	return pathSegment
}

// relaxedServiceNames is the minor from which Service names are DNS
// labels, not DNS-1035 labels (KEP-5311: RelaxedServiceNameValidation,
// on by default from 1.36).
const relaxedServiceNames = 36

// NeedsServerMinor tells whether predicting an apply of gvk depends on
// the apiserver's minor: its defaults (defaults.VersionDependent) or how
// it validates the name of a new object.
func NeedsServerMinor(gvk schema.GroupVersionKind) bool {
	return defaults.VersionDependent(gvk) || gvk.GroupKind() == schema.GroupKind{Kind: "Service"}
}

// checkName refuses a name the apiserver refuses on create, with its
// words.
func checkName(gvk schema.GroupVersionKind, custom bool, minor int, namespace, name string) error {
	obj := gvk.Kind + "/" + name
	if namespace != "" {
		obj = gvk.Kind + "/" + namespace + "/" + name
	}
	if name == "" {
		return fmt.Errorf("%s: metadata.name is missing: an apply needs a name", obj)
	}
	if errs := nameRule(gvk.GroupKind(), custom, minor)(name, false); len(errs) > 0 {
		return fmt.Errorf("%s: the apiserver refuses the name: %s: rename the object", obj, strings.Join(errs, "; "))
	}
	return nil
}
