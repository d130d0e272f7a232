#!/usr/bin/env bash
# The one-round-trip floor: explain-conflict and diff against the least a
# server-side prediction costs, and against kubectl's own diff.
#
# Builds bench/floor (one client-go dry-run apply PATCH of the manifest,
# printing the conflicts) and bench/paired (paired runs, wall and CPU
# from the kernel's accounting, peak RSS), starts the test bed apiserver,
# and measures $RUNS paired runs (default 15) of, on a Deployment with
# $CONTAINERS containers (default 50) and on a ConfigMap, with the CPU the
# client spends and the CPU the apiserver spends during the run:
#   floor                                     the server's dry run, nothing more
#   kubectl-ssa explain-conflict              warm: schema and discovery caches filled
#   kubectl-ssa explain-conflict              cold: an empty --cache-dir each run
#   kubectl-ssa who-owns                      one object
# and on the Deployment:
#   kubectl-ssa diff / kubectl diff --server-side   one image changed
#   kubectl-ssa diff / kubectl diff --server-side   49 images changed
#
# With LATENCY_MS (say 5), every request goes through bench/latency, a
# proxy that delays each direction by that much: a cluster a round trip
# of 2*LATENCY_MS away, as a user's is, rather than on this machine.
#
#   make build testbed && bench/floor.sh
#   RUNS=21 bench/floor.sh
#   LATENCY_MS=5 bench/floor.sh
set -euo pipefail
RUNS=${RUNS:-15}
# shellcheck source-path=SCRIPTDIR
source "$(dirname "$0")/lib.sh"
CONTAINERS=${CONTAINERS:-50}
[[ "$CONTAINERS" =~ ^[1-9][0-9]*$ ]] && [ "$CONTAINERS" -ge 50 ] || { echo "error: CONTAINERS must be a number of at least 50, not '$CONTAINERS'" >&2; exit 2; }
LATENCY_MS=${LATENCY_MS:-0}
[[ "$LATENCY_MS" =~ ^[0-9]+$ ]] || { echo "error: LATENCY_MS must be a whole number of milliseconds, not '$LATENCY_MS'" >&2; exit 2; }

go build -o "$WORK/floor.built" ./bench/floor
go build -o "$WORK/paired" ./bench/paired
# A copy, as lib.sh copies the others (see there).
cp "$WORK/floor.built" "$WORK/floor"
start_testbed
LATENCY_PID=""
if [ "$LATENCY_MS" -gt 0 ]; then
	go build -o "$WORK/latency" ./bench/latency
	server=$(sed -n 's#^ *server: https://##p' "$KUBECONFIG" | head -1)
	"$WORK/latency" -to "$server" -one-way "${LATENCY_MS}ms" >"$WORK/latency.out" 2>"$WORK/latency.log" &
	LATENCY_PID=$!
	trap 'kill "$LATENCY_PID" 2>/dev/null || true; stop_testbed' EXIT
	for _ in $(seq 1 50); do grep -q '^listening ' "$WORK/latency.out" && break; sleep 0.1; done
	proxy=$(sed -n 's/^listening //p' "$WORK/latency.out")
	[ -n "$proxy" ] || { echo "error: bench/latency did not start:" >&2; cat "$WORK/latency.log" >&2; exit 1; }
	sed "s#server: https://$server#server: https://$proxy#" "$KUBECONFIG" >"$WORK/kubeconfig.latency"
	export KUBECONFIG="$WORK/kubeconfig.latency"
fi

conflicting_deployment
# diff's inputs: the live object with one image changed, and with 49.
sed 's/^  replicas: 2$/  replicas: 3/; 0,/image: nginx:1.27/s//image: nginx:1.27-hotfix/' "$WORK/live.yaml" >"$WORK/base.yaml"
awk '/image: nginx:1.27$/ && !done { sub(/nginx:1.27/, "nginx:1.29"); done = 1 } { print }' "$WORK/base.yaml" >"$WORK/one.yaml"
awk '/image: nginx:1.27$/ && n < 49 { sub(/nginx:1.27/, "nginx:1.29"); n++ } { print }' "$WORK/base.yaml" >"$WORK/many.yaml"
[ "$(grep -c 'nginx:1.29' "$WORK/one.yaml")" = 1 ] && [ "$(grep -c 'nginx:1.29' "$WORK/many.yaml")" = 49 ] || { echo "error: the diff manifests are not as meant" >&2; exit 1; }

# The ConfigMap: applied by "platform", one key then patched by hand.
configmap() { # configmap VALUE
	printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: default}\ndata:\n'
	local i
	for i in $(seq 0 19); do printf '  key%02d: "%s-%d"\n' "$i" "$1" "$i"; done
}
configmap a >"$WORK/cm-live.yaml"
configmap b >"$WORK/cm.yaml"
run_ok "$KUBECTL" apply --server-side --field-manager=platform -f "$WORK/cm-live.yaml"
run_ok "$KUBECTL" patch configmap settings --field-manager=kubectl-edit -p '{"data":{"key00":"by-hand"}}'

# Fill the caches, and check each command says what it should.
OK_CODES="1"
run_ok "$WORK/floor" "$WORK/m.yaml" deployments platform
grep -q 'replicas' "$WORK/last.out" || { echo "error: the floor did not conflict on .spec.replicas:" >&2; cat "$WORK/last.out" >&2; exit 1; }
run_ok "$PLUGIN" explain-conflict -f "$WORK/m.yaml" --field-manager platform --cache-dir "$WORK/cache"
grep -q 'replicas' "$WORK/last.out" || { echo "error: explain-conflict did not predict the conflict on .spec.replicas:" >&2; cat "$WORK/last.out" >&2; exit 1; }
run_ok "$WORK/floor" "$WORK/cm.yaml" configmaps platform
run_ok "$PLUGIN" explain-conflict -f "$WORK/cm.yaml" --field-manager platform --cache-dir "$WORK/cache"
grep -q 'key00' "$WORK/last.out" || { echo "error: explain-conflict did not predict the conflict on key00:" >&2; cat "$WORK/last.out" >&2; exit 1; }
for f in one many; do
	run_ok "$PLUGIN" diff -f "$WORK/$f.yaml" --field-manager platform --cache-dir "$WORK/cache"
	grep -q 'nginx:1.29' "$WORK/last.out" || { echo "error: kubectl-ssa diff does not show the new image:" >&2; cat "$WORK/last.out" >&2; exit 1; }
	run_ok "$KUBECTL" diff --server-side --field-manager platform -f "$WORK/$f.yaml"
	grep -q 'nginx:1.29' "$WORK/last.out" || { echo "error: kubectl diff does not show the new image:" >&2; cat "$WORK/last.out" >&2; exit 1; }
done
OK_CODES="0"
run_ok "$PLUGIN" who-owns deployment/web --cache-dir "$WORK/cache"

# spec NAME PREPARE OK_CODES ARGS...: one line of paired's input.
spec() {
	local IFS=$'\t'
	echo "$*"
}
cold="rm -rf $WORK/cold"
{
	spec floor "" 1 "$WORK/floor" "$WORK/m.yaml" deployments platform
	spec "explain-conflict warm" "" 1 "$PLUGIN" explain-conflict -f "$WORK/m.yaml" --field-manager platform --cache-dir "$WORK/cache"
	spec "explain-conflict cold" "$cold" 1 "$PLUGIN" explain-conflict -f "$WORK/m.yaml" --field-manager platform --cache-dir "$WORK/cold"
	spec "who-owns" "" 0 "$PLUGIN" who-owns deployment/web --cache-dir "$WORK/cache"
} >"$WORK/deployment.spec"
{
	spec floor "" 1 "$WORK/floor" "$WORK/cm.yaml" configmaps platform
	spec "explain-conflict warm" "" 1 "$PLUGIN" explain-conflict -f "$WORK/cm.yaml" --field-manager platform --cache-dir "$WORK/cache"
	spec "explain-conflict cold" "$cold" 1 "$PLUGIN" explain-conflict -f "$WORK/cm.yaml" --field-manager platform --cache-dir "$WORK/cold"
	spec "who-owns" "" 0 "$PLUGIN" who-owns configmap/settings --cache-dir "$WORK/cache"
} >"$WORK/configmap.spec"
{
	spec "kubectl diff --server-side, 1 change" "" 1 "$KUBECTL" diff --server-side --field-manager platform -f "$WORK/one.yaml"
	spec "kubectl-ssa diff, 1 change" "" 1 "$PLUGIN" diff -f "$WORK/one.yaml" --field-manager platform --cache-dir "$WORK/cache"
} >"$WORK/diff-one.spec"
{
	spec "kubectl diff --server-side, 49 changes" "" 1 "$KUBECTL" diff --server-side --field-manager platform -f "$WORK/many.yaml"
	spec "kubectl-ssa diff, 49 changes" "" 1 "$PLUGIN" diff -f "$WORK/many.yaml" --field-manager platform --cache-dir "$WORK/cache"
} >"$WORK/diff-many.spec"

echo "on $(nproc) cores; $(go version | cut -d' ' -f3); server $("$KUBECTL" version -o json 2>/dev/null | sed -n 's/.*"gitVersion": "\(v[^"]*\)".*/\1/p' | tail -1)"
[ "$LATENCY_MS" -gt 0 ] && echo "every request through bench/latency: ${LATENCY_MS} ms each way (a $((2 * LATENCY_MS)) ms round trip)"
for s in deployment configmap diff-one diff-many; do
	echo
	case $s in
	deployment) echo "Deployment with $CONTAINERS containers, a conflicting apply" ;;
	configmap) echo "ConfigMap with 20 keys, a conflicting apply" ;;
	diff-one) echo "diff: Deployment with $CONTAINERS containers, one image changed" ;;
	diff-many) echo "diff: Deployment with $CONTAINERS containers, 49 images changed" ;;
	esac
	# SERVER_MS: the apiserver's (and its etcd's) CPU during each run;
	# BOTH_MS: client and server together.
	"$WORK/paired" -runs "$RUNS" -server-pid "$TESTBED_PID" "$WORK/$s.spec"
done
