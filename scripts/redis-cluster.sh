#!/usr/bin/env bash
# Starts (or stops) a local Redis Cluster of N masters (default 3), without replicas or
# persistence, on free ports of 127.0.0.1, for tests and development.
#
#   eval "$(scripts/redis-cluster.sh start DIR [N])"   # sets REDIS_CLUSTER_ADDRS
#   scripts/redis-cluster.sh stop DIR
#
# DIR holds the nodes' configuration (nodes-PORT.conf), logs and pid files, and a node's snapshot
# when it is asked for one (BGSAVE writes dump-PORT.rdb: the nodes share DIR). start prints
# `export REDIS_CLUSTER_ADDRS=host:port,...` once every node reports cluster_state:ok with all
# 16384 slots covered; agora then runs on it with -redis-cluster "$REDIS_CLUSTER_ADDRS". A
# production cluster wants replicas (redis-cli --cluster create ... --cluster-replicas 1) and
# persistence.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/redis-lib.sh"

usage() { echo "usage: $0 start DIR [MASTERS] | stop DIR" >&2; exit 2; }
[ $# -ge 2 ] || usage
cmd=$1 dir=$2 n=${3:-3}

case "$cmd" in
stop) stop_all "$dir"; exit 0 ;;
start) ;;
*) usage ;;
esac

mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
trap 'stop_all "$dir"' ERR
ports=()
for _ in $(seq 1 "$n"); do
  start_server "$dir" redis --port PORT --bind 127.0.0.1 --dir "$dir" \
    --cluster-enabled yes --cluster-config-file nodes-PORT.conf --cluster-node-timeout 2000 \
    --save '' --dbfilename dump-PORT.rdb --appendonly no \
    --enable-debug-command local --loglevel warning
  ports+=("$port")
done

addrs=()
for p in "${ports[@]}"; do addrs+=("127.0.0.1:$p"); done
if ! redis-cli --cluster create "${addrs[@]}" --cluster-replicas 0 --cluster-yes >"$dir/create.log" 2>&1; then
  cat "$dir/create.log" >&2
  false
fi

cluster_ok() {
  local info
  info=$(redis-cli -p "$1" cluster info) || return 1
  grep -q '^cluster_state:ok' <<<"$info" && grep -q '^cluster_slots_ok:16384' <<<"$info" &&
    grep -q "^cluster_known_nodes:$n" <<<"$info"
}
for p in "${ports[@]}"; do wait_for 30 "cluster state ok on port $p" cluster_ok "$p"; done

echo "export REDIS_CLUSTER_ADDRS=$(IFS=,; echo "${addrs[*]}")"
