#!/usr/bin/env bash
# explain-conflict against the server's own dry run of the same apply.
#
# Starts the test bed apiserver, creates a Deployment with $CONTAINERS
# containers (default 10) by server-side apply (manager platform), changes
# two of its fields with other managers (kubectl scale, kubectl set image),
# and writes the platform manifest with other values for them: an apply
# that conflicts. Then compares the median wall time of $RUNS runs
# (default 9) of
#   kubectl-ssa explain-conflict -f m.yaml      warm: schema cache filled by a first run
#   kubectl-ssa explain-conflict -f m.yaml      cold: a fresh --cache-dir each run
#   kubectl apply --server-side --dry-run=server -f m.yaml
#
# With BASELINE_PLUGIN set to another build (say the last release), its
# warm runs are measured too, on the same server, to compare builds.
#
#   make build testbed && bench/explain-conflict.sh
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
source "$(dirname "$0")/lib.sh"
CONTAINERS=${CONTAINERS:-10}
[[ "$CONTAINERS" =~ ^[1-9][0-9]*$ ]] || { echo "error: CONTAINERS must be a positive number, not '$CONTAINERS'" >&2; exit 2; }

start_testbed

conflicting_deployment

# The apply conflicts (exit 1) on .spec.replicas and the image of c0, and
# the prediction agrees with the server.
OK_CODES="1"
run_ok "$PLUGIN" explain-conflict -f "$WORK/m.yaml" --field-manager platform --verify --cache-dir "$WORK/cache"
grep -q 'replicas' "$WORK/last.out" || { echo "error: no conflict on .spec.replicas predicted:" >&2; cat "$WORK/last.out" >&2; exit 1; }
run_ok "$KUBECTL" apply --server-side --dry-run=server --field-manager platform -f "$WORK/m.yaml"
grep -q 'conflict' "$WORK/last.out" || { echo "error: the server's dry run did not conflict:" >&2; cat "$WORK/last.out" >&2; exit 1; }

# Warm: the schema cache and kubectl's discovery cache are filled above.
measure "kubectl apply --server-side --dry-run=server" "" -- \
	"$KUBECTL" apply --server-side --dry-run=server --field-manager platform -f "$WORK/m.yaml"
measure "kubectl-ssa explain-conflict (warm cache)" "" -- \
	"$PLUGIN" explain-conflict -f "$WORK/m.yaml" --field-manager platform --cache-dir "$WORK/cache"
if [ -n "${BASELINE_PLUGIN:-}" ]; then
	BASELINE_PLUGIN=$(realpath -m -- "$BASELINE_PLUGIN")
	OK_CODES="0 1"
	run_ok "$BASELINE_PLUGIN" explain-conflict -f "$WORK/m.yaml" --field-manager platform --cache-dir "$WORK/cache-baseline"
	measure "baseline explain-conflict (warm cache)" "" -- \
		"$BASELINE_PLUGIN" explain-conflict -f "$WORK/m.yaml" --field-manager platform --cache-dir "$WORK/cache-baseline"
	measure "kubectl-ssa explain-conflict (warm, again)" "" -- \
		"$PLUGIN" explain-conflict -f "$WORK/m.yaml" --field-manager platform --cache-dir "$WORK/cache"
fi
# Cold: a new cache directory each run (schema and discovery).
# shellcheck disable=SC2016 # expanded by measure, at each run
measure "kubectl-ssa explain-conflict (cold cache)" 'rm -rf "$WORK/cold"' -- \
	"$PLUGIN" explain-conflict -f "$WORK/m.yaml" --field-manager platform --cache-dir "$WORK/cold"
report "explain-conflict: Deployment with $CONTAINERS containers, 2 conflicts" "kubectl apply --server-side --dry-run=server"
