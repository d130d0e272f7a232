// Package render turns kubectl-ssa's result data into what people and
// scripts read: tables, the blame view, trees, and JSON/YAML reports.
//
// Colour is decided once per Printer (never through fatih/color's global
// switch), each manager keeps a stable colour, user-controlled strings are
// escaped before they reach a terminal, and JSON/YAML are never coloured.
// Output order is deterministic.
package render
