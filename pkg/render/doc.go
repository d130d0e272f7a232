// Package render turns kubectl-ssa's result data into what people and
// scripts read: tables, the blame view, trees, and JSON/YAML reports.
//
// Colour is decided once per Palette (never through fatih/color's global
// switch), each manager keeps a stable colour, and JSON/YAML are never
// coloured. Every text view writes through Terminal, the one place where
// control characters of user-controlled strings (manager names,
// subresources, values, error messages) are escaped on their way to a
// terminal; only the palette's own colours pass. YAML streams (yaml.go).
// Output order is deterministic.
package render
