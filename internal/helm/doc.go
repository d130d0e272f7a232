// Package helm reads Helm releases as Helm 3 and 4 store them, without
// the helm binary or its SDK: the value of a release Secret's (or
// ConfigMap's) "release" key, base64 of the gzipped JSON of the release,
// decoded as helm.sh/helm/v4/pkg/storage/driver's decodeRelease decodes
// it, the names and labels Helm gives those objects, and the label and
// annotations Helm adds to every object it applies.
//
// It decodes the few fields kubectl-ssa uses (name, namespace, revision,
// status, manifest, apply method) and nothing else: the chart and the
// values, which may hold secrets, are never kept. Anyone who may create
// Secrets can write one labelled as a release, so what it reads is
// bounded: 16 MiB decompressed, checked while decompressing, and
// MaxObjects objects a manifest. Reading the objects from a cluster is
// internal/kube's.
package helm
