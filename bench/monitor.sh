#!/usr/bin/env bash
# kubectl ssa monitor's footprint: peak RSS (VmHWM of /proc/PID/status) and
# idle CPU (utime + stime over IDLE seconds with no write in the cluster) of
# the monitor watching ConfigMaps in all namespaces, at SMALL (default
# 5,000) and LARGE (default 50,000) objects, and at LARGE with FINDINGS
# (default 5,000) of them edited by hand: RSS should grow with the
# findings, not with the objects. Targets at SMALL: at most 64 MiB, under
# 2% of a core idle. RSS counts the executable's mapped pages (file-backed,
# about 60 MiB of a 48 MB binary, reclaimable); RssAnon is the heap and
# the informers' store.
#
# Starts the test bed apiserver (no controller manager) and installs the
# PolicyReport CRDs (deploy/crds): the monitor runs as deployed, with
# Events and PolicyReports on. Objects are created by bench/populate as
# kubectl create makes them; 1 in 100 of SMALL (and about FINDINGS of
# LARGE) is then labelled as kubectl label does, audit's manual-edit.
#
#   make build && bench/monitor.sh                 # about 10 minutes on 2 cores
#   SMALL=1000 LARGE=5000 IDLE=20 bench/monitor.sh # a quick look
# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"

SMALL=${SMALL:-5000}
LARGE=${LARGE:-50000}
FINDINGS=${FINDINGS:-5000}
IDLE=${IDLE:-60}
for v in SMALL LARGE FINDINGS IDLE; do
	[[ "${!v}" =~ ^[1-9][0-9]*$ ]] || { echo "error: $v must be a positive number, not '${!v}'" >&2; exit 2; }
done
[ "$SMALL" -le "$LARGE" ] && [ "$FINDINGS" -le "$LARGE" ] || { echo "error: SMALL and FINDINGS must be at most LARGE" >&2; exit 2; }
TICKS=$(getconf CLK_TCK)
MONITOR_PID=""

stop_monitor() {
	if [ -n "$MONITOR_PID" ] && kill -0 "$MONITOR_PID" 2>/dev/null; then
		kill -TERM "$MONITOR_PID"
		wait "$MONITOR_PID" || { echo "error: the monitor did not end cleanly on SIGTERM (exit $?)" >&2; tail -5 "$WORK/monitor.log" >&2; exit 1; }
	fi
	MONITOR_PID=""
}
trap 'stop_monitor; stop_testbed' EXIT

run_ok go build -o "$WORK/populate" ./bench/populate
start_testbed
run_ok "$KUBECTL" create namespace bench
run_ok "$KUBECTL" apply --server-side -k deploy/crds

# populate FROM TO: ConfigMaps o-FROM..o-(TO-1) in namespace bench, as
# kubectl create makes them, 32 at a time (bench/populate).
populate() { run_ok "$WORK/populate" -n bench -from "$1" -to "$2"; }

# edit FROM TO STEP: every STEP-th of them labelled as kubectl label does
# (audit's manual-edit finding).
edit() { run_ok "$WORK/populate" -n bench -from "$1" -to "$2" -edit "$3"; }

# measure LABEL: start the monitor, wait until it is ready and has seen
# every ConfigMap, let it settle, take its idle CPU over IDLE seconds and
# its peak RSS, stop it. Prints one row.
measure() {
	local label=$1 want addr deadline objects findings
	want=$("$KUBECTL" get configmaps -A --no-headers | wc -l)
	"$PLUGIN" monitor configmaps -A --metrics-bind-address 127.0.0.1:0 >"$WORK/monitor.out" 2>"$WORK/monitor.log" &
	MONITOR_PID=$!
	deadline=$((SECONDS + 300))
	addr=""
	until [ -n "$addr" ] && curl -sf "http://$addr/readyz" >/dev/null; do
		[ $SECONDS -lt $deadline ] && kill -0 "$MONITOR_PID" 2>/dev/null || { echo "error: the monitor is not ready; its log:" >&2; tail -20 "$WORK/monitor.log" >&2; exit 1; }
		addr=$(sed -n 's/.*and \/readyz on \([0-9.:]*\).*/\1/p' "$WORK/monitor.log" | head -1)
		sleep 0.5
	done
	until objects=$(curl -sf "http://$addr/metrics" | awk '$1 == "kubectl_ssa_objects{kind=\"ConfigMap\"}" { print $2 }') && [ "${objects:-0}" = "$want" ]; do
		[ $SECONDS -lt $deadline ] || { echo "error: the monitor sees ${objects:-no} ConfigMaps, the server has $want" >&2; exit 1; }
		sleep 1
	done
	# Let the first listing's reports and Events go out and the heap settle.
	sleep 15
	local t0 t1
	t0=$(awk '{ print $14 + $15 }' "/proc/$MONITOR_PID/stat")
	sleep "$IDLE"
	t1=$(awk '{ print $14 + $15 }' "/proc/$MONITOR_PID/stat")
	findings=$(curl -sf "http://$addr/metrics" | awk '/^kubectl_ssa_findings\{/ { n += $2 } END { print n + 0 }')
	local hwm rss anon
	hwm=$(awk '/^VmHWM:/ { printf "%.1f", $2 / 1024 }' "/proc/$MONITOR_PID/status")
	rss=$(awk '/^VmRSS:/ { printf "%.1f", $2 / 1024 }' "/proc/$MONITOR_PID/status")
	anon=$(awk '/^RssAnon:/ { printf "%.1f", $2 / 1024 }' "/proc/$MONITOR_PID/status")
	stop_monitor
	printf '| %s | %d | %d | %s | %s | %s | %s |\n' "$label" "$objects" "$findings" "$hwm" "$rss" "$anon" \
		"$(awk -v d=$((t1 - t0)) -v hz="$TICKS" -v s="$IDLE" 'BEGIN { printf "%.2f", 100 * d / hz / s }')"
}

echo "| objects | ConfigMaps watched | open findings | peak RSS (MiB) | RSS idle (MiB) | of which anonymous (MiB) | idle CPU (% of a core) |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"
populate 0 "$SMALL"
edit 0 "$SMALL" 100
measure "$SMALL, 1% edited"
populate "$SMALL" "$LARGE"
measure "$LARGE, the same edits"
if [ "$FINDINGS" -gt $((SMALL / 100)) ]; then
	step=$(((LARGE - SMALL) / (FINDINGS - SMALL / 100)))
	edit "$SMALL" "$LARGE" $((step > 0 ? step : 1))
	measure "$LARGE, about $FINDINGS edited"
fi
