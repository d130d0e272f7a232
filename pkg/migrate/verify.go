package migrate

import (
	"context"
	"fmt"
	"reflect"
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
)

// verify re-reads the object and compares every value with before, the
// server's bookkeeping aside (managedFields, resourceVersion, and the
// generation, which the write itself may bump). When another writer
// changed it after the migration, the values can't be attributed: that is
// a note, not a failure.
func verify(ctx context.Context, c Clients, it Item, before *unstructured.Unstructured, written *metav1.PartialObjectMetadata, p *Plan, opts RunOptions) error {
	after, err := c.dynClient(it).Get(ctx, it.Meta.Name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	if written != nil && after.GetResourceVersion() != written.ResourceVersion {
		return &VerifyNote{Msg: "another writer changed the object right after the migration, so its values were not compared"}
	}
	strip := func(u *unstructured.Unstructured) map[string]any {
		o := u.DeepCopy().Object
		unstructured.RemoveNestedField(o, "metadata", "managedFields")
		unstructured.RemoveNestedField(o, "metadata", "resourceVersion")
		// The server's counter, compared on its own below.
		unstructured.RemoveNestedField(o, "metadata", "generation")
		if p.RemoveLastApplied {
			unstructured.RemoveNestedField(o, "metadata", "annotations", ownership.LastAppliedAnnotation)
			if a, ok, _ := unstructured.NestedMap(o, "metadata", "annotations"); ok && len(a) == 0 {
				unstructured.RemoveNestedField(o, "metadata", "annotations")
			}
		}
		return o
	}
	if before != nil {
		if path := firstDifference(strip(before), strip(after), ""); path != "" {
			return fmt.Errorf("%s differs from before the migration", path)
		}
		if err := sameGeneration(before.GetGeneration(), after.GetGeneration()); err != nil {
			return err
		}
	}
	if opts.VerifyApply != nil {
		return opts.VerifyApply(ctx, after)
	}
	return nil
}

// sameGeneration checks the server's counter of the object's changes. A
// kind's strategy may count the migration's one write (a Deployment counts
// every change of its annotations, so --remove-last-applied bumps it by
// one): the counter then moves by one, which is no value changing. Any
// other move is not the migration's one write, and fails the check.
func sameGeneration(before, after int64) error {
	if after != before && after != before+1 {
		return fmt.Errorf(".metadata.generation went from %d to %d, which the migration's one write does not explain (it adds one at most)", before, after)
	}
	return nil
}

// firstDifference returns the first path where two values differ, or "".
func firstDifference(a, b any, path string) string {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok && bok {
		keys := map[string]bool{}
		for k := range am {
			keys[k] = true
		}
		for k := range bm {
			keys[k] = true
		}
		sorted := make([]string, 0, len(keys))
		for k := range keys {
			sorted = append(sorted, k)
		}
		sort.Strings(sorted)
		for _, k := range sorted {
			if d := firstDifference(am[k], bm[k], path+"."+k); d != "" {
				return d
			}
		}
		return ""
	}
	if !reflect.DeepEqual(a, b) {
		if path == "" {
			return "the object"
		}
		return path
	}
	return ""
}

// VerifyNote is a verification finding that the migration did not cause
// and cannot fix: the last-applied configuration conflicts with a manager
// that changed a field after the client-side apply (kubectl scale, say).
// Client-side apply would have overwritten that change silently; a
// server-side apply reports it.
type VerifyNote struct{ Msg string }

func (n *VerifyNote) Error() string { return n.Msg }
