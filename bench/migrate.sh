#!/usr/bin/env bash
# bench/migrate.sh: objects per second of "kubectl ssa migrate" over N
# client-side-applied ConfigMaps on the local test bed, against the only
# route users have today, per object:
#   kubectl apply view-last-applied cm/X -o yaml | kubectl apply --server-side -f -
# (timed on a sample of SAMPLE objects and extrapolated), and the peak
# memory (max RSS) of migrate at N and at N_LARGE objects.
#   N=1000 N_LARGE=5000 SAMPLE=30 bench/migrate.sh
set -euo pipefail
source "$(dirname "$0")/lib.sh"
N=${N:-1000}
N_LARGE=${N_LARGE:-5000}
SAMPLE=${SAMPLE:-30}

start_testbed

# make_csa NS COUNT: COUNT ConfigMaps as "kubectl apply" (client-side)
# creates them: the last-applied annotation, manager kubectl-client-side-apply.
make_csa() {
	local ns=$1 count=$2
	"$KUBECTL" create namespace "$ns" >/dev/null
	python3 - "$ns" "$count" >"$WORK/$ns.json" <<'PY'
import json, sys
ns, n = sys.argv[1], int(sys.argv[2])
items = []
for i in range(n):
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm-%05d" % i, "namespace": ns},
          "data": {"app": "bench", "index": str(i), "payload": "x" * 200}}
    last = json.dumps(cm, separators=(",", ":"))
    cm["metadata"]["annotations"] = {"kubectl.kubernetes.io/last-applied-configuration": last + "\n"}
    items.append(cm)
print(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
PY
	"$KUBECTL" create -f "$WORK/$ns.json" --field-manager kubectl-client-side-apply >/dev/null
}

# migrate_run NS: wall ms and max RSS KiB of one migrate over the namespace.
migrate_run() {
	local ns=$1 t0 t1
	t0=$(now_ns)
	/usr/bin/time -f '%M' -o "$WORK/rss" "$PLUGIN" migrate configmaps -n "$ns" --no-backup -o json >"$WORK/migrate.json"
	t1=$(now_ns)
	echo "$(( (t1 - t0) / 1000000 )) $(cat "$WORK/rss")"
}

echo "creating $N client-side-applied ConfigMaps..." >&2
make_csa bench "$N"
read -r ms rss < <(migrate_run bench)
migrated=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["summary"]["migrated"])' "$WORK/migrate.json")
[ "$migrated" = "$N" ] || { echo "error: migrated $migrated of $N" >&2; exit 1; }

echo "timing the kubectl route on $SAMPLE objects..." >&2
make_csa sample "$SAMPLE"
t0=$(now_ns)
for i in $(seq 0 $((SAMPLE - 1))); do
	name=$(printf 'cm-%05d' "$i")
	"$KUBECTL" -n sample apply view-last-applied "cm/$name" -o yaml | "$KUBECTL" apply --server-side -f - >/dev/null
done
t1=$(now_ns)
per_obj_ms=$(( (t1 - t0) / 1000000 / SAMPLE ))

echo "creating $N_LARGE client-side-applied ConfigMaps..." >&2
make_csa large "$N_LARGE"
read -r ms_large rss_large < <(migrate_run large)

awk -v n="$N" -v ms="$ms" -v rss="$rss" -v per="$per_obj_ms" -v nl="$N_LARGE" -v msl="$ms_large" -v rssl="$rss_large" 'BEGIN {
	printf "\nmigrate vs the per-object kubectl route, on %d cores\n", '"$(nproc)"'
	printf "%-44s %10s %12s %12s\n", "ROUTE", "OBJECTS", "WALL_S", "OBJECTS/S"
	printf "%-44s %10d %12.1f %12.1f\n", "kubectl ssa migrate (concurrency 8)", n, ms/1000, n/(ms/1000)
	printf "%-44s %10d %12.1f %12.1f\n", "view-last-applied | apply --server-side", n, per*n/1000, 1000/per
	printf "speed-up: %.1fx\n", (per*n)/ms
	printf "\nmemory (max RSS) of migrate: %d objects %.1f MiB, %d objects %.1f MiB (%.2fx for %.0fx the objects)\n", n, rss/1024, nl, rssl/1024, rssl/rss, nl/n
	printf "migrate at %d objects: %.1f s, %.1f objects/s\n", nl, msl/1000, nl/(msl/1000)
}'
