package conflict

import (
	"testing"

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
