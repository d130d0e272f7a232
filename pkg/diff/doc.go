// Package diff tells what a server-side apply changes in an object: the
// object before and as the server would store it after (defaults
// included), every changed leaf or atomic value with its owners before and
// after, and what other managers keep that the manifest does not set. It
// builds on the predictions of package conflict; nothing is written.
//
// It also extracts what one manager applies (extract.go).
package diff
