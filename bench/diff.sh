#!/usr/bin/env bash
# diff against kubectl's own server-side diff of the same apply.
#
# Starts the test bed apiserver, creates a Deployment with $CONTAINERS
# containers (default 50) by server-side apply (manager platform), and
# writes the manifest with another image and replica count. Then compares
# the median wall time of $RUNS runs (default 9) of
#   kubectl-ssa diff -f m.yaml                      warm schema cache
#   kubectl diff --server-side -f m.yaml            (a server dry run; needs patch permission)
#
#   make build testbed && bench/diff.sh
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
source "$(dirname "$0")/lib.sh"
CONTAINERS=${CONTAINERS:-50}
[[ "$CONTAINERS" =~ ^[1-9][0-9]*$ ]] || { echo "error: CONTAINERS must be a positive number, not '$CONTAINERS'" >&2; exit 2; }

start_testbed

manifest 2 nginx:1.27 >"$WORK/live.yaml"
manifest 4 nginx:1.28 >"$WORK/m.yaml"
run_ok "$KUBECTL" apply --server-side --field-manager=platform -f "$WORK/live.yaml"

# Both see the same change: every image and the replicas (exit 1).
OK_CODES="1"
run_ok "$PLUGIN" diff -f "$WORK/m.yaml" --field-manager platform --cache-dir "$WORK/cache"
grep -q 'nginx:1.28' "$WORK/last.out" || { echo "error: kubectl-ssa diff does not show the new image:" >&2; cat "$WORK/last.out" >&2; exit 1; }
run_ok "$KUBECTL" diff --server-side --field-manager platform -f "$WORK/m.yaml"
grep -q 'nginx:1.28' "$WORK/last.out" || { echo "error: kubectl diff does not show the new image:" >&2; cat "$WORK/last.out" >&2; exit 1; }

measure "kubectl diff --server-side" "" -- \
	"$KUBECTL" diff --server-side --field-manager platform -f "$WORK/m.yaml"
measure "kubectl-ssa diff (warm cache)" "" -- \
	"$PLUGIN" diff -f "$WORK/m.yaml" --field-manager platform --cache-dir "$WORK/cache"
measure "kubectl-ssa diff -o json (warm cache)" "" -- \
	"$PLUGIN" diff -f "$WORK/m.yaml" --field-manager platform --cache-dir "$WORK/cache" -o json
report "diff: Deployment with $CONTAINERS containers, $CONTAINERS images and the replicas changed" "kubectl diff --server-side"
