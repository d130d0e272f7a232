// Package monitor is kubectl ssa monitor's engine: metadata informers over
// the selected kinds feed every version of every object to audit.Check
// (findings, kept as gauges and PolicyReport results) and every change of
// one to fight.Moves (hand edits, forced takeovers and, through a
// fight.Tracker, ownership fights: counters and Events). Only
// metadata is read (managedFields are metadata): no value, and never a
// Secret's, is fetched. The informers' store keeps each object's
// managedFields and the few labels and annotations audit reads; the
// monitor itself keeps only what it found, so its memory beyond the store
// grows with the findings, not the objects.
package monitor
