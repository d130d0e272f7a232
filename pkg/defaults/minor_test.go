package defaults

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// A 1.36 apiserver does not default a StatefulSet's maxUnavailable: the
// entry and its copies in the values above it are gone; 1.37 keeps them.
func TestBuiltinForOlderMinor(t *testing.T) {
	gvk := schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "StatefulSet"}
	if !VersionDependent(gvk) || VersionDependent(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}) {
		t.Fatal("VersionDependent")
	}
	for _, tc := range []struct {
		minor int
		want  any
	}{
		{36, map[string]any{"partition": int64(0)}},
		{37, map[string]any{"maxUnavailable": int64(1), "partition": int64(0)}},
		{0, map[string]any{"maxUnavailable": int64(1), "partition": int64(0)}},
	} {
		tab, ok := BuiltinFor(gvk, tc.minor)
		if !ok {
			t.Fatal("no table")
		}
		ans := tab.Removal(fieldpath.MakePathOrDie("spec", "updateStrategy", "rollingUpdate"), []any{
			map[string]any{"spec": map[string]any{"updateStrategy": map[string]any{}}},
			map[string]any{"updateStrategy": map[string]any{}},
			map[string]any{},
		})
		if diff := cmp.Diff(tc.want, normal(ans.Value)); diff != "" {
			t.Errorf("minor %d: (-want +got)\n%s", tc.minor, diff)
		}
	}
}

func normal(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, x := range t {
			out[k] = normal(x)
		}
		return out
	case float64:
		return int64(t)
	case int:
		return int64(t)
	}
	return v
}
