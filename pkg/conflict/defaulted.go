package conflict

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/defaults"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/pathlang"
)

// Defaulted is the field manager's result of r with the defaults the
// apiserver fills in (a reset field's default, a new container's): the
// object admission sees. The paths returned are fields whose default is
// not known here.
func Defaulted(r *Simulation) (*unstructured.Unstructured, []fieldpath.Path) {
	res := r.Result.DeepCopy()
	res.SetManagedFields(r.ManagedFields)
	var unknown []fieldpath.Path
	for _, m := range r.MaybeReset {
		unknown = append(unknown, m.PathElements)
	}
	// The defaults first: a reset field whose parent the apply emptied
	// comes back inside the parent's default. Then the resets, which
	// also hold what the apiserver allocated and keeps.
	if c, ok := r.Defaults.(defaults.Completer); ok {
		// A status the apply leaves as it was (reset by the storage, or
		// not applied) already holds the server's defaults.
		status, keep := res.Object["status"]
		keep = keep && r.Live != nil && defaults.SameJSON(status, r.Live.Object["status"])
		if keep {
			status = runtime.DeepCopyJSONValue(status)
		}
		for _, p := range c.Complete(res.Object) {
			if !keep || len(p) == 0 || p[0].FieldName == nil || *p[0].FieldName != "status" {
				unknown = append(unknown, p)
			}
		}
		if keep {
			res.Object["status"] = status
		}
	}
	for _, rs := range r.Reset {
		if !setAbsent(res.Object, rs.PathElements, rs.Value) {
			unknown = append(unknown, rs.PathElements)
		}
	}
	defaults.Finish(res)
	return res, unknown
}

// setAbsent sets p to v in obj unless p is there already; false when it
// can't (a position on the way).
func setAbsent(obj map[string]any, p fieldpath.Path, v any) bool {
	if _, ok := pathlang.Lookup(obj, p); ok {
		return true
	}
	return ownership.SetPath(obj, p, v) == nil
}
