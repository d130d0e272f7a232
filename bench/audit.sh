#!/usr/bin/env bash
# audit over many objects of many kinds, against kubectl get -o json of
# the same kinds, and audit's peak memory at 1,000 and at $PER_KIND x 10
# objects.
#
# Starts the test bed apiserver, creates $PER_KIND objects (default 1000)
# of each of 10 kinds in namespace "bench" with kubectl create (1 in 100
# then labelled by hand, so there are findings), and reports:
#   - the median wall time of $RUNS runs (default 5) of
#       kubectl-ssa audit KINDS -A -o json
#       kubectl get KINDS -A -o json
#     and audit's objects per second;
#   - audit's peak RSS (GNU time) with 100 objects per kind and with
#     $PER_KIND per kind: chunked metadata-only lists keep it flat.
#
#   make build testbed && bench/audit.sh
#   PLUGIN=/path/to/kubectl-ssa RUNS=9 PER_KIND=2000 bench/audit.sh
set -euo pipefail
RUNS=${RUNS:-5}
# shellcheck source-path=SCRIPTDIR
source "$(dirname "$0")/lib.sh"
PER_KIND=${PER_KIND:-1000}
[[ "$PER_KIND" =~ ^[1-9][0-9]*$ ]] && [ "$PER_KIND" -ge 100 ] || { echo "error: PER_KIND must be a number of at least 100, not '$PER_KIND'" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "error: /usr/bin/time (GNU time) is needed for the peak memory" >&2; exit 2; }

KINDS=configmaps,secrets,serviceaccounts,roles,rolebindings,leases.coordination.k8s.io,poddisruptionbudgets.policy,networkpolicies.networking.k8s.io,podtemplates,limitranges

start_testbed
run_ok "$KUBECTL" create namespace bench

# objects KIND FROM TO: the manifests of objects FROM..TO-1 of a kind.
objects() {
	awk -v kind="$1" -v from="$2" -v to="$3" 'BEGIN {
	for (i = from; i < to; i++) {
		name = sprintf("o-%05d", i)
		print "---"
		if (kind == "configmaps") { print "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " name ", labels: {app: bench}}\ndata: {key: value-" i "}" }
		else if (kind == "secrets") { print "apiVersion: v1\nkind: Secret\nmetadata: {name: " name ", labels: {app: bench}}\nstringData: {password: p" i "}" }
		else if (kind == "serviceaccounts") { print "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: " name ", labels: {app: bench}}" }
		else if (kind == "roles") { print "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {name: " name ", labels: {app: bench}}\nrules: [{apiGroups: [\"\"], resources: [configmaps], verbs: [get]}]" }
		else if (kind == "rolebindings") { print "apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata: {name: " name ", labels: {app: bench}}\nroleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: " name "}\nsubjects: [{kind: User, name: u" i "}]" }
		else if (kind == "leases") { print "apiVersion: coordination.k8s.io/v1\nkind: Lease\nmetadata: {name: " name ", labels: {app: bench}}\nspec: {holderIdentity: h" i "}" }
		else if (kind == "pdbs") { print "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: " name ", labels: {app: bench}}\nspec: {minAvailable: 1, selector: {matchLabels: {app: a" i "}}}" }
		else if (kind == "netpols") { print "apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata: {name: " name ", labels: {app: bench}}\nspec: {podSelector: {matchLabels: {app: a" i "}}, policyTypes: [Ingress]}" }
		else if (kind == "podtemplates") { print "apiVersion: v1\nkind: PodTemplate\nmetadata: {name: " name ", labels: {app: bench}}\ntemplate: {metadata: {labels: {app: a" i "}}, spec: {containers: [{name: c, image: nginx}]}}" }
		else if (kind == "limitranges") { print "apiVersion: v1\nkind: LimitRange\nmetadata: {name: " name ", labels: {app: bench}}\nspec: {limits: [{type: Container, max: {cpu: \"" (i % 8 + 1) "\"}}]}" }
	}}'
}

# populate FROM TO: objects FROM..TO-1 of every kind, one kubectl per
# kind side by side (kubectl's client-side rate limit, not the server, is
# what bounds one of them); 1 in 100 is then edited by hand.
populate() {
	local from=$1 to=$2 k
	for k in configmaps secrets serviceaccounts roles rolebindings leases pdbs netpols podtemplates limitranges; do
		objects "$k" "$from" "$to" >"$WORK/$k.yaml"
	done
	printf '%s\n' configmaps secrets serviceaccounts roles rolebindings leases pdbs netpols podtemplates limitranges |
		xargs -P 10 -I{} sh -c '"$0" create -n bench -f "$1/{}.yaml" >/dev/null' "$KUBECTL" "$WORK"
	local names=()
	for ((i = from; i < to; i += 100)); do names+=("$(printf 'o-%05d' "$i")"); done
	run_ok "$KUBECTL" label -n bench configmaps "${names[@]}" edited=by-hand
}

# peak_rss_mb: audit's peak RSS in MB.
peak_rss_mb() {
	/usr/bin/time -f '%M' -o "$WORK/rss" "$PLUGIN" audit "$KINDS" -A -o json --fail-on never >"$WORK/audit.json"
	echo "$(($(cat "$WORK/rss") / 1024))"
}

count() { # the objects of KINDS the server has
	"$KUBECTL" get "$KINDS" -A -o name | wc -l
}

t0=$(now_ns)
populate 0 100
small=$(count)
rss_small=$(peak_rss_mb)
populate 100 "$PER_KIND"
t1=$(now_ns)
large=$(count)
echo "created $large objects of 10 kinds in $(((t1 - t0) / 1000000000)) s"

# Both commands must really read every object.
rss_large=$(peak_rss_mb)
scanned=$(sed -n 's/^  "scanned": \([0-9]*\),$/\1/p' "$WORK/audit.json")
[ "$scanned" -eq "$large" ] || { echo "error: audit scanned $scanned objects, the server has $large" >&2; exit 1; }
"$PLUGIN" audit "$KINDS" -n bench -o jsonpath='{range .findings[*]}{.code} {.object.kind}/{.object.name}{"\n"}{end}' --fail-on never >"$WORK/findings"
edits=$(grep -c '^manual-edit ConfigMap/o-' "$WORK/findings" || true)
[ "$edits" -eq $((PER_KIND / 100)) ] || { echo "error: audit found $edits manual edits in bench, not $((PER_KIND / 100)):" >&2; cat "$WORK/findings" >&2; exit 1; }
"$PLUGIN" audit "$KINDS" -A -o jsonpath='{range .findings[*]}{.code} {.object.kind}/{.object.namespace}/{.object.name} {.manager}{"\n"}{end}' --fail-on never | grep -v '/bench/' | sed 's/^/finding outside bench: /' || true
"$KUBECTL" get "$KINDS" -A -o json >"$WORK/get.json"
[ "$(grep -c '"kind": "List"' "$WORK/get.json")" -ge 1 ] || { echo "error: kubectl get printed no List" >&2; exit 1; }

# One untimed run each warms kubectl's discovery cache in $HOME.
OK_CODES="0 1" run_ok "$PLUGIN" audit "$KINDS" -A -o json

measure "kubectl get (10 kinds) -A -o json" "" -- "$KUBECTL" get "$KINDS" -A -o json
measure "kubectl-ssa audit (10 kinds) -A -o json" "" -- "$PLUGIN" audit "$KINDS" -A -o json --fail-on never
measure "kubectl-ssa audit -A (every kind)" "" -- "$PLUGIN" audit -A -o json --fail-on never
report "audit: $large objects of 10 kinds" "kubectl get (10 kinds) -A -o json"
ms=$(awk -F '\t' '$1 ~ /audit \(10 kinds\)/ { print $2 }' "$WORK/results")
echo
printf 'audit: %.0f objects/s\n' "$(echo "$large / ($ms / 1000)" | bc -l)"
printf 'audit peak RSS: %s MB at %d objects, %s MB at %d objects\n' "$rss_small" "$small" "$rss_large" "$large"
