#!/usr/bin/env bash
# Starts (or stops) a local Redis Cluster of N masters (default 3), without replicas or
# persistence, on free ports of 127.0.0.1, for tests and development.
#
#   eval "$(scripts/redis-cluster.sh start DIR [N])"   # sets REDIS_CLUSTER_ADDRS
#   scripts/redis-cluster.sh stop DIR
#
# DIR holds the nodes' configuration, logs and pid files. start prints
# `export REDIS_CLUSTER_ADDRS=host:port,...` once the cluster reports cluster_state:ok on every
# node; agora then runs on it with `-redis-cluster "$REDIS_CLUSTER_ADDRS"`. A production cluster
# wants replicas (redis-cli --cluster create ... --cluster-replicas 1) and persistence.
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
ports=()
for _ in $(seq 1 "$n"); do
  p=$(pick_port)
  ports+=("$p")
  redis-server --port "$p" --bind 127.0.0.1 --dir "$dir" \
    --cluster-enabled yes --cluster-config-file "nodes-$p.conf" --cluster-node-timeout 2000 \
    --save '' --appendonly no --enable-debug-command local \
    --daemonize yes --pidfile "$dir/redis-$p.pid" --logfile "$dir/redis-$p.log" --loglevel warning
done
for p in "${ports[@]}"; do wait_for "redis-server on port $p" ping "$p"; done

addrs=()
for p in "${ports[@]}"; do addrs+=("127.0.0.1:$p"); done
if ! redis-cli --cluster create "${addrs[@]}" --cluster-replicas 0 --cluster-yes >"$dir/create.log" 2>&1; then
  cat "$dir/create.log" >&2
  stop_all "$dir"
  exit 1
fi

cluster_ok() {
  local info
  info=$(redis-cli -p "$1" cluster info) || return 1
  grep -q '^cluster_state:ok' <<<"$info" && grep -q '^cluster_slots_ok:16384' <<<"$info" &&
    grep -q "^cluster_known_nodes:$n" <<<"$info"
}
for p in "${ports[@]}"; do
  wait_for "cluster state ok on port $p" cluster_ok "$p" || { stop_all "$dir"; exit 1; }
done

list=$(IFS=,; echo "${addrs[*]}")
echo "export REDIS_CLUSTER_ADDRS=$list"
