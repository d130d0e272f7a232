package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-ssa/kubectl-ssa/internal/kube"
	"github.com/kubectl-ssa/kubectl-ssa/internal/source"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/conflict"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/migrate"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/pathlang"
)

// goValues are Go values printed with %v ({0xc000123 ...}, 0xc000123):
// memory addresses that mean nothing to a user.
var goValues = regexp.MustCompile(`\{0x[0-9a-f]+[^{}]*\}|0x[0-9a-f]{6,}`)

// verifyApply checks that applying the object's last-applied
// configuration as the target would conflict with nothing and remove
// nothing, with the explain-conflict engine.
func (o *migrateOptions) verifyApply(c *kube.Cluster) func(context.Context, *unstructured.Unstructured) error {
	var mu sync.Mutex
	src := source.NewCluster(c, o.cacheDir())
	return func(ctx context.Context, obj *unstructured.Unstructured) error {
		la, ok := obj.GetAnnotations()[ownership.LastAppliedAnnotation]
		if !ok {
			return nil
		}
		applied := &unstructured.Unstructured{}
		if err := json.Unmarshal([]byte(la), &applied.Object); err != nil {
			return fmt.Errorf("the last-applied annotation is not JSON: %w", err)
		}
		if applied.GetAPIVersion() != obj.GetAPIVersion() || applied.GetKind() != obj.GetKind() {
			// Written at another version, or a controller's copy of its
			// owner's annotation (a StatefulSet's on a ControllerRevision):
			// nothing to apply to this object.
			return nil
		}
		applied.SetNamespace(obj.GetNamespace())
		mu.Lock() // the schema loader is not safe for concurrent use
		tc, _, err := conflict.TypeConverter(ctx, src, applied, obj)
		mu.Unlock()
		if err != nil {
			return err
		}
		r, err := conflict.Simulate(conflict.Input{Live: obj, Applied: applied, FieldManager: o.target, Schema: tc,
			CRD: conflict.IsCustom(obj.GroupVersionKind()), Served: c.ServedKind})
		if err != nil {
			// The field manager's errors can quote Go values: keep the words.
			return &messageError{msg: fmt.Sprintf("could not predict applying the last-applied configuration as %q: %s", o.target, goValues.ReplaceAllString(err.Error(), "…")), err: err}
		}
		if r.Message != "" {
			// A conflict with a manager the migration should have folded
			// is its failure; any other existed before it.
			ours := false
			for _, cf := range r.Conflicts {
				ours = ours || cf.Manager == ownership.ClientSideApplyManager || slices.Contains(o.from, cf.Manager)
			}
			if !ours {
				return &migrate.VerifyNote{Msg: fmt.Sprintf("the last-applied configuration conflicts with changes made after it (%s); the next apply of that manifest reports it instead of silently overwriting it", strings.ReplaceAll(r.Message, "\n", " "))}
			}
			return fmt.Errorf("applying the last-applied configuration as %q would fail: %s", o.target, r.Message)
		}
		if changed := r.Changes(); len(changed) > 0 {
			return fmt.Errorf("applying the last-applied configuration as %q would remove or reset %s", o.target, strings.Join(pathlang.Strings(changed), ", "))
		}
		return nil
	}
}
