package pathlang_test

import (
	"testing"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/pathlang"
)

// Segments name fields and keyed list items; an item segment reads back
// as it was written, quotes included.
func TestFromSegments(t *testing.T) {
	item := pathlang.ItemSegment("mountPath", `/var/run/"x"`)
	if key, value, ok := pathlang.SplitItemSegment(item); !ok || key != "mountPath" || value != `/var/run/"x"` {
		t.Errorf("SplitItemSegment(%s) = %q, %q, %v", item, key, value, ok)
	}
	for _, seg := range []string{"name", "[name]", `[name=c]`, "[0]"} {
		if _, _, ok := pathlang.SplitItemSegment(seg); ok {
			t.Errorf("%s read as an item", seg)
		}
	}
	got := pathlang.FromSegments([]string{"spec", "containers", pathlang.ItemSegment("name", "c"), "resources"})
	want := fieldpath.MakePathOrDie("spec", "containers", fieldpath.KeyByFields("name", "c"), "resources")
	if !got.Elements().Equals(want) {
		t.Errorf("FromSegments = %s, want %s", got, pathlang.Path(want))
	}
	if s := got.String(); s != `.spec.containers[name="c"].resources` {
		t.Errorf("printed %s", s)
	}
}
