// Package migrate moves objects from client-side apply to server-side
// apply and cleans up field managers (rename, merge, fold, release,
// apiVersion rewrite), by rewriting metadata.managedFields only: no field
// value ever changes.
//
// Plan is pure: it takes an object and returns the new managedFields and
// the reasons. Run drives a selection of objects with bounded
// concurrency, backups and a report, writing each plan through
// pkg/write's one resourceVersion-guarded patch and its retry on 409;
// Undo restores backups the same way.
package migrate
