// Package pathlang is kubectl-ssa's one path language: the way users write
// a field (.spec.containers[name=web].image, the apiserver's own form,
// JSON-pointer-like and kubectl-explain-like forms) and the way it prints.
//
// ParsePath reads a path every way users write one, resolving list items
// against an object when one is given; Path marshals to the apiserver's
// path string (the one in conflict errors) and prints (String) in a form
// that reads back; Pattern matches paths against globs in linear time;
// Glob matches manager names. Lookup and Remove read and delete the value
// a path names in an object. JQ and JSONPointer write a path in other
// tools' languages (Argo CD's jqPathExpressions, Flux's and JSON patches'
// pointers).
//
// It is pure: no cluster, no rendering, and it imports no other package of
// kubectl-ssa.
package pathlang
