#!/usr/bin/env bash
# Builds the test bed (test/cmd/kube-apiserver: kube-apiserver, etcd and
# kube-controller-manager in one binary) at another Kubernetes version,
# in a module of its own under the cache directory: k8s.io/kubernetes at
# that version, its staging modules replaced by the published v0.MINOR.PATCH
# (as its own go.mod points them at ./staging), etcd as it requires.
#
#   hack/testbed-version.sh v1.36.3 OUT
#
# The first build of a version takes about 10 minutes on 2 cores.
set -euo pipefail
version=${1:?usage: hack/testbed-version.sh vX.Y.Z OUT}
out=${2:?usage: hack/testbed-version.sh vX.Y.Z OUT}
root=$(cd "$(dirname "$0")/.." && pwd)
src=$(dirname "$out")/src
mkdir -p "$src"
staging=v0.${version#v1.}
export GOSUMDB=${GOSUMDB:-off} GOFLAGS=-mod=mod

gomod=$(cd "$root/test" && go mod download -json "k8s.io/kubernetes@$version" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p')
[ -f "$gomod" ] || { echo "testbed-version: no go.mod for k8s.io/kubernetes@$version" >&2; exit 1; }

cp "$root"/test/cmd/kube-apiserver/*.go "$src/"
{
	echo "module kubectl-ssa.test/testbed"
	echo
	echo "go $(go env GOVERSION | sed 's/^go//; s/^\([0-9]*\.[0-9]*\).*/\1/')"
	echo
	echo "require k8s.io/kubernetes $version"
	echo
	# k8s.io/kubernetes points its staging modules at ./staging: here,
	# at their published versions.
	awk -v v="$staging" '/=> \.\/staging\/src\// { print "replace " $1 " => " $1 " " v }' "$gomod" | sort -u
} > "$src/go.mod"
(cd "$src" && go mod tidy >/dev/null)
minor=${version#v1.}; minor=${minor%%.*}
(cd "$src" && go build -ldflags "-X k8s.io/component-base/version.gitVersion=$version -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor" -o "$out" .)
echo "$out"
