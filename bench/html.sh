#!/usr/bin/env bash
# The -o html pages in headless Chromium (Debian's, as make testdeps
# installs it), no cluster needed: who-owns' page of a 50-container
# Deployment and audit's page of 10,000 Deployments in 50 namespaces,
# each loaded $RUNS times (default 5) from a file: its size, the time to
# its first paint and to the end of its load event, and for the audit the
# time its filters take to hide and show a code's findings.
#
#   make testdeps && bench/html.sh
#   RUNS=10 bench/html.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../test" || exit 2
RUNS=${RUNS:-5}
[[ "$RUNS" =~ ^[1-9][0-9]*$ ]] || { echo "error: RUNS must be a positive number, not '$RUNS'" >&2; exit 2; }
[ -x /usr/bin/chromium ] || { echo "error: /usr/bin/chromium is needed: run make testdeps" >&2; exit 2; }
go test -run '^$' -bench . -benchtime "${RUNS}x" ./htmlbench
