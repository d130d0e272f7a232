// Package benchdata builds the large objects the benchmarks of
// pkg/ownership, pkg/render and pkg/conflict share: a ConfigMap with
// thousands of keys and a Deployment with dozens of containers, with
// managedFields as the apiserver would record them after a few appliers
// and controllers wrote them. It is used by tests only.
package benchdata
