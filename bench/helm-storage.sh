#!/usr/bin/env bash
# Peak memory and time of diff --helm-release against crafted Helm
# storage: Secrets anyone who may create Secrets can write, labelled as
# Helm labels a release's revisions (issue 36: ten of them made this
# command take 3.75-4.92 GB and 34-42 s). Each is measured once with
# /usr/bin/time -v; the bound to stay under is 300 MiB and 20 s.
#
#   ten-bombs       ten deployed revisions, each a release padded with
#                   $PAD_MIB MiB of spaces (default 600: ~800 KB stored),
#                   the most a Secret's 1 MiB holds; refused (exit 2)
#   bombs-under-one nine such revisions, and a real one above them:
#                   diffed (exit 0)
#   most-objects    nine such revisions under one of 3,000 ConfigMaps
#                   (the most kubectl-ssa reads of a release) of 13.6 MiB
#                   (near the 16 MiB a release may decompress to), none
#                   of them created: every one predicted (exit 1)
#
#   make build && TESTBED=~/.cache/kubectl-ssa/testbed-v1.37.1/kube-apiserver bench/helm-storage.sh
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
source "$(dirname "$0")/lib.sh"
PAD_MIB=${PAD_MIB:-600}
[[ "$PAD_MIB" =~ ^[1-9][0-9]*$ ]] || { echo "error: PAD_MIB must be a positive number, not '$PAD_MIB'" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "error: /usr/bin/time (GNU time) is needed for the peak memory" >&2; exit 2; }

start_testbed

# The padding is one gzip member made once: gzip readers (Go's, so
# Helm's and kubectl-ssa's) read concatenated members as one stream.
head -c "$((PAD_MIB << 20))" /dev/zero | tr '\0' ' ' | gzip -9 >"$WORK/pad.gz"

# json_string FILE: FILE's content as a JSON string's inside (no quotes
# or backslashes in what this script writes).
json_string() { awk '{ printf "%s\\n", $0 }' "$1"; }

# store RELEASE REVISION FILE: FILE (gzipped JSON) as the revision's
# Secret, as Helm's Secrets driver stores it.
store() {
	base64 -w0 "$3" >"$WORK/release.b64"
	run_ok "$KUBECTL" create secret generic "sh.helm.release.v1.$1.v$2" -n default --type=helm.sh/release.v1 --from-file=release="$WORK/release.b64"
	run_ok "$KUBECTL" label secret "sh.helm.release.v1.$1.v$2" -n default owner=helm name="$1" status=deployed version="$2"
}

# bomb RELEASE REVISION: a release padded with $PAD_MIB MiB of spaces.
bomb() {
	{
		printf '{"name":"%s","namespace":"default","version":%d,"info":{"status":"deployed"},"manifest":"' "$1" "$2" | gzip -9
		cat "$WORK/pad.gz"
		printf '"}' | gzip -9
	} >"$WORK/bomb.gz"
	store "$1" "$2" "$WORK/bomb.gz"
}

# real RELEASE REVISION MANIFEST: a release of MANIFEST, applied server-side.
real() {
	printf '{"name":"%s","namespace":"default","version":%d,"info":{"status":"deployed"},"apply_method":"ssa","manifest":"%s"}' \
		"$1" "$2" "$(json_string "$3")" | gzip -9 >"$WORK/real.gz"
	store "$1" "$2" "$WORK/real.gz"
}

chart() { # a small chart's render, as Helm applies it
	local i
	for i in 1 2 3; do
		printf -- '---\n# Source: web/templates/cm%d.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web-%d\n  namespace: default\n' "$i" "$i"
		printf '  labels:\n    app.kubernetes.io/managed-by: Helm\n  annotations:\n    meta.helm.sh/release-name: web\n    meta.helm.sh/release-namespace: default\ndata:\n  mode: fast\n'
	done
}
chart >"$WORK/chart.yaml"
run_ok "$KUBECTL" apply --server-side --field-manager=helm -f "$WORK/chart.yaml"
# 3,000 objects (helm.MaxObjects) of 4.4 KiB each: 13.6 MiB, about as
# much as the 16 MiB a release may decompress to holds beside the JSON.
awk 'BEGIN {
	v = sprintf("%1100s", ""); gsub(/ /, "x", v)
	for (i = 0; i < 3000; i++) {
		printf "---\n# Source: many/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: many-%05d\ndata:\n", i
		for (k = 0; k < 4; k++) printf "  k%d: %s%d\n", k, v, i
	}
}' >"$WORK/many.yaml"

for n in $(seq 1 10); do bomb bombs "$n"; done
for n in $(seq 1 9); do bomb web "$n" && bomb many "$n"; done
real web 10 "$WORK/chart.yaml"
real many 10 "$WORK/many.yaml"

printf '%-16s %6s %14s %10s %12s\n' CASE EXIT "PEAK RSS (MiB)" "TIME (s)" "BYTES OUT"
for c in ten-bombs:bombs bombs-under-one:web most-objects:many; do
	code=0
	/usr/bin/time -v -o "$WORK/time" "$PLUGIN" diff -n default --helm-release "${c#*:}" --color never >"$WORK/out" 2>"$WORK/err" || code=$?
	kb=$(sed -n 's/^\tMaximum resident set size (kbytes): //p' "$WORK/time")
	wall=$(sed -n 's/^\tElapsed (wall clock) time (h:mm:ss or m:ss): //p' "$WORK/time")
	secs=$(echo "$wall" | awk -F: '{ s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; print s }')
	printf '%-16s %6s %14.1f %10.2f %12s\n' "${c%%:*}" "$code" "$(echo "$kb / 1024" | bc -l)" "$secs" "$(wc -c <"$WORK/out")"
	if [ "$code" -ge 2 ] || [ -n "${SHOW:-}" ]; then head -c 600 "$WORK/out" | sed "s/^/                 /"; sed 's/^/                 /' "$WORK/err"; fi
done
