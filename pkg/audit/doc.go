// Package audit finds what is wrong with objects' field managers: fields
// changed by hand or by managers other than the expected ones, leftovers
// of client-side apply, history managers, entries at apiVersions no longer
// served, generic manager names, entries that own nothing, last-applied
// annotations close to the annotation limit, and fields two appliers
// share; and the signatures of known incidents: managedFields wiped on an
// applied object, one manager recorded as Update and as Apply, list items
// a hand edit holds in an applied object, Kubernetes components owning
// spec fields they never write; and, when asked (Options.Rules), objects
// made imperatively and hand edits the applier adopted.
//
// It is pure: Check reads one object's metadata and returns Findings, each
// with a stable Code, a Severity, the evidence it was read from and the
// kubectl-ssa command that fixes it. It needs no object content, so
// callers list metadata only.
package audit
