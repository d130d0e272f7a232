#!/usr/bin/env bash
# A snapshot of $OBJECTS objects (default 5000: 100 Deployments and the
# rest ConfigMaps, in one namespace, applied by "gitops"), and the
# prediction of a 100-object render (50 Deployments with a new image, 50
# ConfigMaps with a new value) from it, against the same render live:
#   kubectl-ssa snapshot deployments,configmaps -n bench   the snapshot (its size and peak RSS too)
#   kubectl-ssa diff --snapshot                            from the snapshot, kubeconfig pointing at nothing
#   kubectl-ssa diff                                       live
#   kubectl diff --server-side                             live, the server's dry run of each object
#
#   make build testbed && bench/snapshot.sh
#   RUNS=5 OBJECTS=2000 bench/snapshot.sh
set -euo pipefail
RUNS=${RUNS:-3}
# shellcheck source-path=SCRIPTDIR
source "$(dirname "$0")/lib.sh"
OBJECTS=${OBJECTS:-5000}
[[ "$OBJECTS" =~ ^[0-9]+$ ]] && [ "$OBJECTS" -ge 200 ] || { echo "error: OBJECTS must be a number of at least 200, not '$OBJECTS'" >&2; exit 2; }

deployment() { # deployment NAME IMAGE
	printf -- '---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: %s, namespace: bench}\nspec:\n  replicas: 1\n  selector: {matchLabels: {app: %s}}\n  template:\n    metadata: {labels: {app: %s}}\n    spec:\n      containers: [{name: main, image: "%s"}]\n' "$1" "$1" "$1" "$2"
}
configmap() { # configmap NAME VALUE
	printf -- '---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: bench}\ndata: {key: "%s", other: "kept"}\n' "$1" "$2"
}

start_testbed
"$KUBECTL" create namespace bench >/dev/null
# The objects, applied four files side by side.
for part in 0 1 2 3; do : >"$WORK/objects.$part.yaml"; done
for i in $(seq 1 100); do deployment "web-$i" nginx:1.27 >>"$WORK/objects.$((i % 4)).yaml"; done
for i in $(seq 1 $((OBJECTS - 100))); do configmap "cfg-$i" v1 >>"$WORK/objects.$((i % 4)).yaml"; done
applies=()
for part in 0 1 2 3; do
	"$KUBECTL" apply --server-side --field-manager gitops -f "$WORK/objects.$part.yaml" >"$WORK/apply.$part.log" &
	applies+=($!)
done
for pid in "${applies[@]}"; do wait "$pid"; done # (not the test bed's)
n=$("$KUBECTL" get deployments,configmaps -n bench --no-headers | wc -l)
[ "$n" -ge "$OBJECTS" ] || { echo "error: $n objects in namespace bench, want $OBJECTS" >&2; exit 1; }
# The render: 50 Deployments with a new image, 50 ConfigMaps with a new value.
: >"$WORK/render.yaml"
for i in $(seq 1 50); do deployment "web-$i" nginx:1.28 >>"$WORK/render.yaml"; done
for i in $(seq 1 50); do configmap "cfg-$i" v2 >>"$WORK/render.yaml"; done
cat >"$WORK/nowhere.kubeconfig" <<'YAML'
apiVersion: v1
kind: Config
clusters: [{name: nowhere, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: nowhere, user: {token: none}}]
contexts: [{name: nowhere, context: {cluster: nowhere, user: nowhere}}]
current-context: nowhere
YAML

snap="$WORK/bench.snapshot"
measure "kubectl-ssa snapshot ($n objects)" "" -- "$PLUGIN" snapshot deployments,configmaps -n bench -o "$snap"
/usr/bin/time -f '%M' -o "$WORK/rss" "$PLUGIN" snapshot deployments,configmaps -n bench -o "$snap" 2>/dev/null
OK_CODES="1"
measure "kubectl-ssa diff --snapshot (100 objects)" "" -- "$PLUGIN" diff -f "$WORK/render.yaml" --field-manager gitops --snapshot "$snap" --kubeconfig "$WORK/nowhere.kubeconfig"
measure "kubectl-ssa diff live (100 objects)" "" -- "$PLUGIN" diff -f "$WORK/render.yaml" --field-manager gitops
measure "kubectl diff --server-side (100 objects)" "" -- "$KUBECTL" diff --server-side --field-manager gitops -f "$WORK/render.yaml"
report "snapshot of $n objects; a 100-object render predicted from it and live" "kubectl diff --server-side (100 objects)"
echo
echo "snapshot file: $(stat -c %s "$snap") bytes (gzip; $(gzip -dc "$snap" | wc -c) bytes of JSON); peak RSS while taking it: $(( $(cat "$WORK/rss") / 1024 )) MiB"
