#!/usr/bin/env bash
# extract --all-managers, who-owns and diff on an object with many Apply
# managers (the apiserver does not cap them).
#
# Starts the test bed apiserver and creates a ConfigMap whose $MANAGERS
# (default 10000) Apply managers each applied one key: a create, then one
# merge patch through the API that writes the managedFields (as migrate
# and restores of backups do; faster than 10,000 applies). Then
# the median wall time of $RUNS runs (default 9) of
#   kubectl-ssa extract cm/many --all-managers
#   kubectl-ssa who-owns cm/many
#   kubectl-ssa diff -f changed.yaml --field-manager m00005
#   kubectl get cm many -o yaml --show-managed-fields
#
#   make build testbed && bench/extract-managers.sh
#   MANAGERS=1000 RUNS=3 bench/extract-managers.sh
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
source "$(dirname "$0")/lib.sh"
MANAGERS=${MANAGERS:-10000}
[[ "$MANAGERS" =~ ^[1-9][0-9]*$ ]] || { echo "error: MANAGERS must be a positive number, not '$MANAGERS'" >&2; exit 2; }

start_testbed

awk -v n="$MANAGERS" 'BEGIN {
	print "apiVersion: v1"
	print "kind: ConfigMap"
	print "metadata: {name: many, namespace: default}"
	print "data:"
	for (i = 0; i < n; i++) printf "  k%05d: v%d\n", i, i
}' >"$WORK/many.yaml"
awk -v n="$MANAGERS" 'BEGIN {
	printf "{\"metadata\":{\"managedFields\":["
	for (i = 0; i < n; i++) {
		if (i) printf ","
		printf "{\"manager\":\"m%05d\",\"operation\":\"Apply\",\"apiVersion\":\"v1\",\"fieldsType\":\"FieldsV1\",\"time\":\"2026-11-22T00:00:00Z\",\"fieldsV1\":{\"f:data\":{\"f:k%05d\":{}}}}", i, i
	}
	print "]}}"
}' >"$WORK/managers.json"
run_ok "$KUBECTL" create -f "$WORK/many.yaml"
# The apiserver takes managedFields as written by an update (a create
# records its own): one merge patch sets all the entries.
run_ok "$KUBECTL" patch cm many --type merge --patch-file "$WORK/managers.json"
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: many, namespace: default}\ndata: {k00005: changed}\n' >"$WORK/changed.yaml"

# The server kept every entry, and extract really writes one document each.
entries=$("$KUBECTL" get cm many --show-managed-fields -o jsonpath='{range .metadata.managedFields[*]}{.manager}{"\n"}{end}' | grep -c '^m' || true)
[ "$entries" -eq "$MANAGERS" ] || { echo "error: the object has $entries managers, not $MANAGERS" >&2; exit 1; }
"$PLUGIN" extract cm/many --all-managers >"$WORK/extract.yaml"
docs=$(grep -c '^# ConfigMap/default/many: m' "$WORK/extract.yaml" || true)
[ "$docs" -eq "$MANAGERS" ] || { echo "error: extract wrote $docs documents, not $MANAGERS" >&2; exit 1; }

run_ok "$KUBECTL" get cm many -o yaml --show-managed-fields
measure "kubectl get -o yaml --show-managed-fields" "" -- "$KUBECTL" get cm many -o yaml --show-managed-fields
measure "kubectl-ssa extract --all-managers" "" -- "$PLUGIN" extract cm/many --all-managers
measure "kubectl-ssa who-owns" "" -- "$PLUGIN" who-owns cm/many --color never
OK_CODES="0 1" measure "kubectl-ssa diff" "" -- "$PLUGIN" diff -f "$WORK/changed.yaml" --field-manager m00005
report "$MANAGERS Apply managers on one ConfigMap" "kubectl get -o yaml --show-managed-fields"
