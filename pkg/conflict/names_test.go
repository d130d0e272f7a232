package conflict

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestCheckName(t *testing.T) {
	for _, tc := range []struct {
		gvk    schema.GroupVersionKind
		custom bool
		name   string
		err    string
	}{
		{schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, false, "web.config-1", ""},
		{schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, false, "Bad_Name", "ConfigMap/ns/Bad_Name: the apiserver refuses the name: a lowercase RFC 1123 subdomain"},
		{schema.GroupVersionKind{Version: "v1", Kind: "Service"}, false, "web.svc", "a DNS-1035 label"},
		{schema.GroupVersionKind{Version: "v1", Kind: "Service"}, false, "1web", "a DNS-1035 label"},
		{schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "StatefulSet"}, false, "db.0", "must not contain dots"},
		{schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"}, false, "system:controller:x", ""},
		{schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"}, false, "a/b", "may not contain '/'"},
		{schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}, true, "UPPER", "RFC 1123 subdomain"},
		{schema.GroupVersionKind{Group: "metrics.example.com", Version: "v1", Kind: "Thing"}, false, "Any:Thing", ""},
		{schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, false, "", "metadata.name is missing"},
	} {
		err := checkName(tc.gvk, tc.custom, "ns", tc.name)
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%s %q: %v", tc.gvk.Kind, tc.name, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s %q: got %v, want %q", tc.gvk.Kind, tc.name, err, tc.err)
		}
	}
}
