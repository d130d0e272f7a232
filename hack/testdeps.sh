#!/usr/bin/env bash
# Installs what the end-to-end tests drive besides the test bed, from
# Debian's packages, when it is missing: Chromium (the -o html pages are
# loaded in it) and Prometheus with promtool (the monitor's metrics and
# alert rules are checked and scraped). A fresh machine and CI have only
# what the project's own files install; the tests fail, never skip,
# when these are absent.
set -euo pipefail
need=()
command -v chromium >/dev/null 2>&1 || need+=(chromium)
{ command -v promtool >/dev/null 2>&1 && command -v prometheus >/dev/null 2>&1; } || need+=(prometheus)
[ ${#need[@]} -eq 0 ] && exit 0
sudo=
[ "$(id -u)" -eq 0 ] || sudo=sudo
echo "installing ${need[*]} for the end-to-end tests (Debian packages)"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
# Debian's prometheus package starts no server here (no init system);
# where one did, the tests still start their own on free ports.
