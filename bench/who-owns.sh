#!/usr/bin/env bash
# who-owns on a large object, against kubectl reading the same object.
#
# Starts the test bed apiserver, applies a ConfigMap with $KEYS keys
# (default 5000) server-side (two appliers, so ownership is shared), and
# compares the median wall time of $RUNS runs (default 9) of
#   kubectl-ssa who-owns cm/big -o table
#   kubectl get cm big -o yaml --show-managed-fields
#
#   make build testbed && bench/who-owns.sh
#   PLUGIN=/path/to/kubectl-ssa RUNS=21 KEYS=20000 bench/who-owns.sh
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
source "$(dirname "$0")/lib.sh"
KEYS=${KEYS:-5000}
[[ "$KEYS" =~ ^[1-9][0-9]*$ ]] || { echo "error: KEYS must be a positive number, not '$KEYS'" >&2; exit 2; }

start_testbed

manifest() { # manifest EVERY: every EVERY-th key
	echo "apiVersion: v1"
	echo "kind: ConfigMap"
	echo "metadata: {name: big, namespace: default}"
	echo "data:"
	awk -v n="$KEYS" -v every="$1" 'BEGIN { for (i = 0; i < n; i += every) printf "  key-%05d.conf: \"value %d\"\n", i, i }'
}
manifest 1 >"$WORK/big.yaml"
manifest 5 >"$WORK/shared.yaml"
run_ok "$KUBECTL" apply --server-side --field-manager=helm -f "$WORK/big.yaml"
run_ok "$KUBECTL" apply --server-side --field-manager=argocd-controller -f "$WORK/shared.yaml"

# Both commands must really read the whole object.
"$PLUGIN" who-owns cm/big -o table --color never >"$WORK/table.txt"
rows=$(grep -c '^\.data' "$WORK/table.txt" || true)
[ "$rows" -eq "$KEYS" ] || { echo "error: who-owns listed $rows data fields, not $KEYS" >&2; exit 1; }
"$KUBECTL" get cm big -o yaml --show-managed-fields >"$WORK/get.yaml"
grep -q 'f:key-00000.conf' "$WORK/get.yaml" || { echo "error: kubectl get did not show managedFields" >&2; exit 1; }

# One untimed run each warms kubectl's discovery cache in $HOME.
run_ok "$KUBECTL" get cm big -o yaml --show-managed-fields
run_ok "$PLUGIN" who-owns cm/big -o table

measure "kubectl get cm big -o yaml --show-managed-fields" "" -- "$KUBECTL" get cm big -o yaml --show-managed-fields
measure "kubectl-ssa who-owns cm/big -o table" "" -- "$PLUGIN" who-owns cm/big -o table
report "who-owns: ConfigMap with $KEYS keys, two appliers" "kubectl get cm big -o yaml --show-managed-fields"
