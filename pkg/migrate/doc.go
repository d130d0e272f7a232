// Package migrate moves objects from client-side apply to server-side
// apply and cleans up field managers (rename, merge, fold, release,
// apiVersion rewrite), by rewriting metadata.managedFields only: no field
// value ever changes.
//
// Plan is pure: it takes an object and returns the new managedFields and
// the reasons. Writer sends a plan with a resourceVersion precondition;
// Run drives a selection of objects with bounded concurrency, backups,
// retries on 409 and a report.
package migrate
