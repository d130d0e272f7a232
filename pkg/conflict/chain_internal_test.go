package conflict

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// The reset fields are the apiserver strategies' GetResetFields.
func TestResetSet(t *testing.T) {
	gk := func(group, kind string) schema.GroupKind { return schema.GroupKind{Group: group, Kind: kind} }
	for _, c := range []struct {
		gk          schema.GroupKind
		subresource string
		hasStatus   bool
		want        []string
	}{
		{gk("apps", "Deployment"), "", true, []string{".status"}},
		{gk("", "ConfigMap"), "", false, nil},
		{csrKind, "", true, []string{".spec", ".status"}},
		{csrKind, "status", true, []string{".spec", ".status.conditions"}},
		{csrKind, "approval", true, []string{".spec", ".status.certificate"}},
		{gk("apps", "Deployment"), "status", true, []string{".spec", ".metadata.labels"}},
		{gk("resource.k8s.io", "ResourceClaim"), "status", true, []string{".metadata", ".spec"}},
		{gk("batch", "Job"), "status", true, []string{".spec"}},
	} {
		set := resetSet(c.gk, c.subresource, c.hasStatus)
		var got []string
		if set != nil {
			set.Iterate(func(p fieldpath.Path) { got = append(got, p.String()) })
		}
		if len(got) != len(c.want) {
			t.Errorf("%s %q: %v, want %v", c.gk, c.subresource, got, c.want)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%s %q: %v, want %v", c.gk, c.subresource, got, c.want)
				break
			}
		}
	}
}

// A CSR's spec is set on create: an update that would change it is
// warned of; the same values and the fields the server set are not.
func TestResetWarnings(t *testing.T) {
	csr := func(spec map[string]any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
			"metadata": map[string]any{"name": "c"}, "spec": spec}}
	}
	live := csr(map[string]any{"expirationSeconds": int64(86400), "username": "admin"})
	if w := resetWarnings(Input{Live: live, Applied: csr(map[string]any{"expirationSeconds": int64(86400)}), HasStatus: true}); len(w) != 0 {
		t.Errorf("same spec: %q", w)
	}
	w := resetWarnings(Input{Live: live, Applied: csr(map[string]any{"expirationSeconds": int64(3600)}), HasStatus: true})
	if len(w) != 1 || !strings.Contains(w[0], "CertificateSigningRequest's spec is set on create only") {
		t.Errorf("changed spec: %q", w)
	}
	if w := resetWarnings(Input{Applied: csr(map[string]any{"expirationSeconds": int64(3600)}), HasStatus: true}); len(w) != 0 {
		t.Errorf("create: %q", w)
	}
}
