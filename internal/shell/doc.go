// Package shell writes commands that users paste into a shell (the
// suggestions of explain-conflict, the fixes of audit): words quoted so
// that a pasted command means what it says and never runs an escape
// sequence.
package shell
