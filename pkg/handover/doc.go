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
// Plan is pure and returns each step with the managedFields predicted after
// it; Run executes a plan step by step against a cluster, re-reading and
// re-planning before every step, so an interrupted run completes when run
// again and a run that already completed does nothing.
package handover
