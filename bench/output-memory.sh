#!/usr/bin/env bash
# Peak memory of who-owns -o json against -o yaml (and -o table) on a
# large saved object, no cluster needed: a ConfigMap with $KEYS keys
# (default 20000) that helm applied, with every fifth key shared with
# argocd-controller, read with --local -f.
#
#   make build && bench/output-memory.sh
#   PLUGIN=/path/to/kubectl-ssa KEYS=50000 bench/output-memory.sh
set -euo pipefail
if [ -n "${PLUGIN:-}" ]; then PLUGIN=$(realpath -m -- "$PLUGIN"); fi
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2
PLUGIN=${PLUGIN:-$PWD/bin/kubectl-ssa}
KEYS=${KEYS:-20000}
[[ "$KEYS" =~ ^[1-9][0-9]*$ ]] || { echo "error: KEYS must be a positive number, not '$KEYS'" >&2; exit 2; }
[ -x "$PLUGIN" ] || { echo "error: $PLUGIN is not an executable: run make build, or set PLUGIN" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "error: /usr/bin/time (GNU time) is needed for the peak memory" >&2; exit 2; }
WORK=$(mktemp -d "${TMPDIR:-/tmp}/kubectl-ssa-bench.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

awk -v n="$KEYS" 'BEGIN {
	print "apiVersion: v1"
	print "kind: ConfigMap"
	print "metadata:"
	print "  name: big"
	print "  namespace: default"
	print "  managedFields:"
	split("helm argocd-controller", mgr, " ")
	for (m = 1; m <= 2; m++) {
		print "  - manager: " mgr[m]
		print "    operation: Apply"
		print "    apiVersion: v1"
		print "    time: \"2026-11-22T00:00:00Z\""
		print "    fieldsType: FieldsV1"
		print "    fieldsV1:"
		print "      f:data:"
		for (i = 0; i < n; i += (m == 1 ? 1 : 5)) printf "        f:key-%05d.conf: {}\n", i
	}
	print "data:"
	for (i = 0; i < n; i++) printf "  key-%05d.conf: \"value %d\"\n", i, i
}' >"$WORK/big.yaml"

printf '%-8s %14s %10s %12s\n' OUTPUT "PEAK RSS (MB)" "TIME (s)" "BYTES OUT"
for out in json yaml table; do
	/usr/bin/time -f '%M %e' -o "$WORK/time" "$PLUGIN" who-owns --local -f "$WORK/big.yaml" -o "$out" --color never >"$WORK/out"
	read -r kb secs <"$WORK/time"
	printf '%-8s %14.1f %10s %12s\n' "$out" "$(echo "$kb / 1024" | bc -l)" "$secs" "$(wc -c <"$WORK/out")"
done
