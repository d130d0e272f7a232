package ownership_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kubectl-ssa/kubectl-ssa/internal/benchdata"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
)

// The index answers as Owners does, for every path any entry has, and
// for paths nobody owns; a field named "a.b" is not the field b of a.
func TestOwnerIndexAnswersAsOwners(t *testing.T) {
	dotted := metav1.ManagedFieldsEntry{Manager: "dotted", Operation: metav1.ManagedFieldsOperationApply,
		FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:labels":{"f:app.kubernetes.io":{}}}}`)}
	nested := metav1.ManagedFieldsEntry{Manager: "nested", Operation: metav1.ManagedFieldsOperationApply,
		FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:labels":{"f:app":{"f:kubernetes.io":{}}}}}`)}
	objs := map[string][]metav1.ManagedFieldsEntry{
		"deployment": benchdata.Deployment(3).GetManagedFields(),
		"configmap":  benchdata.ConfigMap(20).GetManagedFields(),
		"many":       benchdata.ManyManagers(30).GetManagedFields(),
		// past the sets asked one by one: a map of every path
		"many-mapped": benchdata.ManyManagers(40).GetManagedFields(),
		"dotted":      {dotted, nested},
	}
	for name, entries := range objs {
		t.Run(name, func(t *testing.T) {
			index, err := ownership.NewOwnerIndex(entries, nil)
			if err != nil {
				t.Fatal(err)
			}
			all, leaves := &fieldpath.Set{}, &fieldpath.Set{}
			for _, e := range entries {
				s, err := ownership.DecodeEntry(e)
				if err != nil {
					t.Fatal(err)
				}
				all, leaves = all.Union(s), leaves.Union(s.Leaves())
			}
			seen := map[string]int{}
			index.EachLeaf(func(p fieldpath.Path) {
				if !leaves.Has(p) {
					t.Errorf("EachLeaf gave %s, no entry's leaf", p)
				}
				seen[pathID(t, p)]++
			})
			leaves.Iterate(func(p fieldpath.Path) {
				if n := seen[pathID(t, p)]; n != 1 {
					t.Errorf("EachLeaf gave %s %d times, want once", p, n)
				}
			})
			all.Insert(fieldpath.MakePathOrDie("spec", "nobody"))
			n := 0
			all.Iterate(func(p fieldpath.Path) {
				want, err := ownership.Owners(entries, p)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(managers(want), managers(index.Owners(p))); diff != "" {
					t.Errorf("owners of %s (-Owners +index):\n%s", p, diff)
				}
				n++
			})
			if n < 3 {
				t.Fatalf("only %d paths checked", n)
			}
		})
	}
}

// pathID tells paths apart where their text does not (.a.b is a field
// "a.b" or the field b of a).
func pathID(t *testing.T, p fieldpath.Path) string {
	t.Helper()
	b, err := fieldpath.NewSet(p).ToJSON()
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func managers(entries []metav1.ManagedFieldsEntry) []string {
	out := []string{}
	for _, e := range entries {
		out = append(out, e.Manager+"/"+e.Subresource)
	}
	return out
}

// UnionAll, merging in pairs, is the union of the sets one by one.
func TestUnionAll(t *testing.T) {
	for _, n := range []int{0, 1, 2, 7} {
		entries := benchdata.ManyManagers(max(n, 1)).GetManagedFields()[:n]
		want := &fieldpath.Set{}
		var sets []*fieldpath.Set
		for _, e := range entries {
			s, err := ownership.DecodeEntry(e)
			if err != nil {
				t.Fatal(err)
			}
			want = want.Union(s)
			sets = append(sets, s)
		}
		if got := ownership.UnionAll(sets); !got.Equals(want) {
			t.Errorf("%d sets: got %s, want %s", n, got, want)
		}
	}
}
