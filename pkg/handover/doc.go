// Package handover moves field ownership between managers without ever
// changing or resetting a field's value, following the two recipes of the
// Server-Side Apply documentation ("Transferring ownership"):
//
//   - to a controller (the HPA replicas case): a temporary manager first
//     holds the fields at their current values by a real apply, then the
//     old owner releases them; once the controller writes them, the
//     temporary manager lets go;
//   - between appliers: the new manager takes shared ownership at the
//     current values, then the old manager releases them.
//
// And release: a manager gives up fields (a leftover
// kubectl-client-side-apply entry, say) with no value change.
//
// A client-side apply manager keeps its state in the last-applied
// annotation too, and kubectl's next client-side apply deletes what that
// annotation holds and the manifest does not: the step that takes the
// fields out of its managedFields entry takes them out of the annotation
// in the same write (LastAppliedEdit), or the plan is refused with the
// command that clears an annotation it can't edit exactly.
//
// Plan is pure and returns each step with the managedFields predicted after
// it; Run executes a plan step by step against a cluster, re-reading and
// re-planning before every step, so an interrupted run completes when run
// again and a run that already completed does nothing.
package handover
