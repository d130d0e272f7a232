// Package defaults knows what the apiserver puts back when an apply
// removes a field. The apiserver defaults every object it writes: a field
// with a default that an apply removes is set again, so the apply resets
// it rather than removes it.
//
// For built-in kinds the knowledge is data generated from the apiserver's
// own defaulting (k8s.io/kubernetes' defaulting functions and conversions,
// run on probe objects of every kind and version by
// test/cmd/gendefaults): per kind and path, a constant default, a default
// that a hand-written rule computes from other fields (the generator proves
// each rule against the real defaulting), a default chosen by the value of
// one other field, or a default known only to depend on other fields. For
// custom resources it is the structural schema's defaults, applied as the
// apiserver applies them. Nothing here talks to a cluster.
package defaults
