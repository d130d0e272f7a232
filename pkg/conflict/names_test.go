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
		minor  int
		name   string
		err    string
	}{
		{schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, false, 0, "web.config-1", ""},
		{schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, false, 0, "Bad_Name", "ConfigMap/ns/Bad_Name: the apiserver refuses the name: a lowercase RFC 1123 subdomain"},
		{schema.GroupVersionKind{Version: "v1", Kind: "Service"}, false, 0, "web.svc", "must not contain dots"},
		{schema.GroupVersionKind{Version: "v1", Kind: "Service"}, false, 35, "1web", "a DNS-1035 label"},
		{schema.GroupVersionKind{Version: "v1", Kind: "Service"}, false, 0, "1web", ""},
		{schema.GroupVersionKind{Version: "v1", Kind: "Service"}, false, 36, "1web", ""},
		{schema.GroupVersionKind{Version: "v1", Kind: "Event"}, false, 0, "UPPER_ev", ""},
		{schema.GroupVersionKind{Group: "events.k8s.io", Version: "v1", Kind: "Event"}, false, 0, "UPPER_ev", "RFC 1123 subdomain"},
		{schema.GroupVersionKind{Group: "networking.k8s.io", Version: "v1", Kind: "IPAddress"}, false, 0, "2001:db8::1", ""},
		{schema.GroupVersionKind{Group: "networking.k8s.io", Version: "v1", Kind: "IPAddress"}, false, 0, "10.200.0.07", "leading 0"},
		{schema.GroupVersionKind{Group: "networking.k8s.io", Version: "v1", Kind: "IPAddress"}, false, 0, "foo", "IP address"},
		{schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "StatefulSet"}, false, 0, "db.0", "must not contain dots"},
		{schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"}, false, 0, "system:controller:x", ""},
		{schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"}, false, 0, "a/b", "may not contain '/'"},
		{schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}, true, 0, "UPPER", "RFC 1123 subdomain"},
		{schema.GroupVersionKind{Group: "metrics.example.com", Version: "v1", Kind: "Thing"}, false, 0, "Any:Thing", ""},
		{schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, false, 0, "", "metadata.name is missing"},
	} {
		err := checkName(tc.gvk, tc.custom, tc.minor, "ns", tc.name)
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%s %q: %v", tc.gvk.Kind, tc.name, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s %q: got %v, want %q", tc.gvk.Kind, tc.name, err, tc.err)
		}
	}
}
