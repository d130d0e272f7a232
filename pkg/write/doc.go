// Package write is the one write kubectl-ssa makes besides a server-side
// apply: a JSON patch of managedFields (and the last-applied annotation)
// conditioned on the resourceVersion it was planned from (Patch), retried
// after a 409 Conflict by re-reading and planning again (RetryOnConflict),
// with kubectl's --dry-run modes (DryRun). It works on any client-go
// client that can patch (dynamic or metadata), so the engines of pkg/
// that write (handover, migrate) take public clients only.
package write
