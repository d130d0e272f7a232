// Package convert converts built-in objects between the versions the
// apiserver serves them at, for the kinds whose versions differ in shape,
// exactly as the apiserver's own conversion functions do (byte for byte,
// round-trip annotations included), over the k8s.io/api types: the
// apiserver's field manager compares each manager's fields at the version
// the manager wrote, so a prediction needs the same conversion.
//
// Like the field manager's conversion, it does no defaulting: what the
// apiserver's conversion itself sets (the CPU target autoscaling/v1 ->
// v2 adds) is set, the versions' defaulting functions are not run. The
// input object is never changed.
//
// Kinds are registered by group-kind. A kind or version pair that is not
// registered can't be converted here: ToVersion says so and the caller
// must not guess.
//
// test/e2e holds the conversions to a real apiserver's reads and to the
// apiserver's scheme over random objects.
package convert
