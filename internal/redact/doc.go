// Package redact is the last line of defence for Secret values: every
// Secret value the process reads (from the apiserver, through the HTTP
// transport; from manifests, live files and backups) is remembered in a
// Set, in the forms it may be printed in (clear, base64, each line of a
// multi-line value, JSON- and terminal-escaped), and the writers of
// standard output and standard error replace any of them with
// "<redacted>", whichever view, message or error forgot to.
//
// The views redact on their own, as data (ownership.RedactSecret and the
// reports' RedactSecrets): this package catches what they miss. Values
// shorter than MinLen are left to the views, so that a one-letter value
// does not blank every "a" of a report. --show-secret-values turns it off.
package redact
