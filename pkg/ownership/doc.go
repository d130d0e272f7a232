// Package ownership turns an object's metadata.managedFields into an
// ownership model: which manager owns which field, since each manager's last
// write, which fields are shared, and which fields nobody owns.
//
// It is pure: it reads an object and returns data (Report) with stable JSON
// field names; it never talks to a cluster and never renders. Paths are
// fieldpath.Path values from structured-merge-diff, and their String() form
// is exactly the one the apiserver uses in conflict errors, so reports from
// different commands can be joined on it.
package ownership
