# shellcheck shell=bash
# Shared by the bench/ scripts: the test bed, timing, the table of medians.
# Sourced, not run.

# Paths given in the environment are relative to where the script was
# started; the defaults are relative to the repository.
for v in PLUGIN KUBECTL TESTBED; do
	if [ -n "${!v:-}" ]; then
		printf -v "$v" '%s' "$(realpath -m -- "${!v}")"
	fi
done
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2
RUNS=${RUNS:-9}
PLUGIN=${PLUGIN:-$PWD/bin/kubectl-ssa}
KUBECTL=${KUBECTL:-/usr/bin/kubectl}
TESTBED=${TESTBED:-$(make -s testbed-path)}

[[ "$RUNS" =~ ^[1-9][0-9]*$ ]] || { echo "error: RUNS must be a positive number, not '$RUNS'" >&2; exit 2; }
[ -x "$PLUGIN" ] || { echo "error: $PLUGIN is not an executable: run make build, or set PLUGIN" >&2; exit 2; }
[ -x "$KUBECTL" ] || { echo "error: $KUBECTL is not an executable: set KUBECTL" >&2; exit 2; }
[ -x "$TESTBED" ] || { echo "error: the test bed $TESTBED is not built: run make testbed, or set TESTBED" >&2; exit 2; }

# exported for hyperfine's --prepare commands
export WORK
WORK=$(mktemp -d "${TMPDIR:-/tmp}/kubectl-ssa-bench.XXXXXX")
# The measured binaries are copies made the same way: how the page cache
# holds an executable changes its peak RSS by up to 15 MiB (a file the
# linker just wrote can be held in large folios, mapped whole on first
# touch).
cp "$PLUGIN" "$WORK/kubectl-ssa" && PLUGIN=$WORK/kubectl-ssa
cp "$KUBECTL" "$WORK/kubectl" && KUBECTL=$WORK/kubectl
TESTBED_PID=""

stop_testbed() {
	if [ -n "$TESTBED_PID" ] && kill -0 "$TESTBED_PID" 2>/dev/null; then
		kill "$TESTBED_PID" 2>/dev/null || true
		wait "$TESTBED_PID" 2>/dev/null || true
	fi
	rm -rf "$WORK"
}
trap stop_testbed EXIT
trap 'exit 130' INT TERM

# start_testbed runs the test bed apiserver (without the controller
# manager, which no benchmark needs) and exports its KUBECONFIG, with an
# isolated HOME so no user configuration or cache is used.
start_testbed() {
	"$TESTBED" --testbed-dir "$WORK/testbed" --no-controller-manager >"$WORK/testbed.out" 2>"$WORK/testbed.log" &
	TESTBED_PID=$!
	for _ in $(seq 1 180); do
		if grep -q '^ready KUBECONFIG=' "$WORK/testbed.out"; then
			KUBECONFIG=$(sed -n 's/^ready KUBECONFIG=//p' "$WORK/testbed.out")
			export KUBECONFIG
			export HOME="$WORK/home"
			mkdir -p "$HOME"
			return 0
		fi
		if ! kill -0 "$TESTBED_PID" 2>/dev/null; then
			echo "error: the test bed exited; the end of its log:" >&2
			tail -20 "$WORK/testbed.log" >&2
			exit 1
		fi
		sleep 1
	done
	echo "error: the test bed was not ready after 180s (log: $WORK/testbed.log)" >&2
	exit 1
}

# run_ok runs a command quietly; exit codes in $OK_CODES (default 0)
# count as success, anything else stops the script with the output.
OK_CODES=${OK_CODES:-0}
run_ok() {
	local code=0
	"$@" >"$WORK/last.out" 2>&1 || code=$?
	if [[ " $OK_CODES " != *" $code "* ]]; then
		echo "error: '$*' exited $code:" >&2
		tail -20 "$WORK/last.out" >&2
		exit 1
	fi
}

now_ns() { date +%s%N; }

# median_ms reads nanoseconds, one a line, and prints their median in ms.
median_ms() {
	sort -n | awk '{ v[NR] = $1 } END {
		if (NR == 0) { print "nan"; exit }
		m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		printf "%.1f\n", m / 1e6 }'
}

# measure NAME SETUP -- COMMAND...: the median wall time of $RUNS runs of
# COMMAND, each after SETUP (a shell snippet, run untimed; "" for none).
# Results go to $WORK/results as "NAME<TAB>median".
measure() {
	local name=$1 setup=$2
	shift 3
	local t0 t1 median
	if command -v hyperfine >/dev/null 2>&1; then
		local -a prep=()
		[ -n "$setup" ] && prep=(--prepare "$setup")
		local cmd
		printf -v cmd '%q ' "$@"
		hyperfine --style none --runs "$RUNS" -i "${prep[@]}" --export-json "$WORK/h.json" "$cmd" >/dev/null
		median=$(tr -d ' \n' <"$WORK/h.json" | sed -n 's/.*"median":\([0-9.eE+-]*\).*/\1/p' | awk '{ printf "%.1f\n", $1 * 1000 }')
	else
		: >"$WORK/times"
		for _ in $(seq 1 "$RUNS"); do
			if [ -n "$setup" ]; then eval "$setup"; fi
			t0=$(now_ns)
			run_ok "$@"
			t1=$(now_ns)
			echo $((t1 - t0)) >>"$WORK/times"
		done
		median=$(median_ms <"$WORK/times")
	fi
	printf '%s\t%s\n' "$name" "$median" >>"$WORK/results"
}

# report TITLE BASELINE: the medians, and each one's ratio to BASELINE's.
report() {
	local title=$1 baseline=$2
	echo
	echo "$title"
	echo "median of $RUNS runs each ($(command -v hyperfine >/dev/null 2>&1 && echo hyperfine || echo 'date +%s%N')), on $(nproc) cores"
	awk -F '\t' -v base="$baseline" '
		{ name[NR] = $1; ms[NR] = $2; if ($1 == base) b = $2 }
		END {
			w = 7; for (i = 1; i <= NR; i++) if (length(name[i]) > w) w = length(name[i])
			printf "%-" w "s  %10s  %8s\n", "COMMAND", "MEDIAN_MS", "RATIO"
			for (i = 1; i <= NR; i++) printf "%-" w "s  %10.1f  %7.2fx\n", name[i], ms[i], (b > 0 ? ms[i] / b : 0)
		}' "$WORK/results"
}

# manifest REPLICAS IMAGE: a Deployment "web" with $CONTAINERS containers,
# each with args, a port, env and resources.
manifest() { # manifest REPLICAS IMAGE
	cat <<YAML
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: $1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
YAML
	local i
	for i in $(seq 0 $((CONTAINERS - 1))); do
		cat <<YAML
      - name: c$i
        image: $2
        args: [serve, --port=$((8000 + i))]
        ports: [{containerPort: $((8000 + i)), protocol: TCP, name: http-$i}]
        env: [{name: MODE, value: production}, {name: INDEX, value: "$i"}]
        resources: {limits: {cpu: 500m, memory: 256Mi}, requests: {cpu: 100m, memory: 128Mi}}
YAML
	done
}

# conflicting_deployment: Deployment "web" ($CONTAINERS containers)
# applied by "platform" ($WORK/live.yaml), then scaled and one image set by
# hand, so platform's next apply ($WORK/m.yaml: 4 replicas, every image
# new) conflicts on .spec.replicas and c0's image.
conflicting_deployment() {
	manifest 2 nginx:1.27 >"$WORK/live.yaml"
	manifest 4 nginx:1.28 >"$WORK/m.yaml"
	run_ok "$KUBECTL" apply --server-side --field-manager=platform -f "$WORK/live.yaml"
	run_ok "$KUBECTL" scale deployment web --replicas=3
	run_ok "$KUBECTL" set image deployment/web c0=nginx:1.27-hotfix
}
