package render

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/pathlang"
)

// An entry that owns other paths lists those it loses, then those it
// gains; a rewrite that changes no entry says so.
func TestEntryLines(t *testing.T) {
	path := func(s ...any) pathlang.Path { return pathlang.Path(fieldpath.MakePathOrDie(s...)) }
	got := entryLines([]ownership.EntryChange{{Owner: v1alpha1.Owner{Manager: "helm", Operation: "Apply", Subresource: "status", APIVersion: "v1"},
		Change: ownership.EntryChanged, Lost: []pathlang.Path{path("data", "a")}, Gained: []pathlang.Path{path("data", "b"), path("data", "c")}}})
	want := []string{`~ "helm" (Apply with subresource "status", v1):`, "-   .data.a", "+   .data.b", "+   .data.c"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	gone := entryLines([]ownership.EntryChange{{Owner: v1alpha1.Owner{Manager: "a", Operation: "Update", APIVersion: "v1"}, Change: ownership.EntryRemoved, Owned: 1},
		{Owner: v1alpha1.Owner{Manager: "b", Operation: "Update", APIVersion: "v1"}, Change: ownership.EntryRemoved, Owned: 6}})
	if d := cmp.Diff([]string{`- "a" (Update, v1): entry removed (it owned 1 path)`, `- "b" (Update, v1): entry removed (it owned 6 paths)`}, gone); d != "" {
		t.Errorf("removed entries (-want +got):\n%s", d)
	}
	if got := entryLines([]ownership.EntryChange{}); len(got) != 1 || got[0] != "  (managedFields unchanged)" {
		t.Errorf("unchanged: %q", got)
	}
}

// A backup undo could not read is named by its file, not as an empty
// object ("/").
func TestUndoFailureNamesTheFile(t *testing.T) {
	var b strings.Builder
	r := &v1alpha1.MigrationReport{Mode: v1alpha1.MigrateUndo, Objects: []v1alpha1.ObjectResult{{Result: v1alpha1.ResultFailed, Backup: "/tmp/bk/b.json",
		Reason: "the backup cannot be read: /tmp/bk/b.json is not a regular file"}}}
	MigrationReport(&b, r, nil, NewPalette(false))
	want := "failed  /tmp/bk/b.json: the backup cannot be read: /tmp/bk/b.json is not a regular file"
	if line := strings.SplitN(b.String(), "\n", 2)[0]; line != want {
		t.Errorf("first line %q, want %q", line, want)
	}
}
