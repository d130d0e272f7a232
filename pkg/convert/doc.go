// Package convert converts built-in objects between the versions the
// apiserver serves them at, for the kinds whose versions differ in shape,
// exactly as the apiserver's own conversion functions do (byte for byte,
// round-trip annotations included), over the k8s.io/api types: the
// apiserver's field manager compares each manager's fields at the version
// the manager wrote, so a prediction needs the same conversion.
//
// Kinds are registered by group-kind. A kind or version pair that is not
// registered can't be converted here: ToVersion says so and the caller
// must not guess.
package convert
