#!/usr/bin/env bash
# Starts (or stops) a local Redis master, one replica and three Sentinels watching them, without
# persistence, on free ports of 127.0.0.1, for tests and development.
#
#   eval "$(scripts/redis-sentinel.sh start DIR [MASTER_NAME])"
#   scripts/redis-sentinel.sh stop DIR
#
# start prints `export REDIS_SENTINEL_ADDRS=host:port,...` and
# `export REDIS_SENTINEL_MASTER=name` (default agora) once the replica is in sync and every
# Sentinel knows the replica and the other Sentinels; agora then runs with
# -redis-sentinel "$REDIS_SENTINEL_ADDRS" -redis-master "$REDIS_SENTINEL_MASTER". The Sentinels
# declare the master down after 1s without answers (down-after-milliseconds) and need 2 of 3 to
# agree (the quorum), so a test failover takes a few seconds.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/redis-lib.sh"

usage() { echo "usage: $0 start DIR [MASTER_NAME] | stop DIR" >&2; exit 2; }
[ $# -ge 2 ] || usage
cmd=$1 dir=$2 name=${3:-agora}

case "$cmd" in
stop) stop_all "$dir"; exit 0 ;;
start) ;;
*) usage ;;
esac

mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
trap 'stop_all "$dir"' ERR
common=(--port PORT --bind 127.0.0.1 --dir "$dir" --save '' --appendonly no
  --enable-debug-command local --loglevel warning)
start_server "$dir" redis "${common[@]}"
master=$port
start_server "$dir" redis "${common[@]}" --replicaof 127.0.0.1 "$master"
replica=$port
in_sync() { redis-cli -p "$replica" info replication | grep -q '^master_link_status:up'; }
wait_for 30 "replica in sync" in_sync

sentinels=()
for i in 1 2 3; do
  # Sentinel rewrites its configuration file, so each gets its own.
  cat >"$dir/sentinel-$i.conf" <<CONF
bind 127.0.0.1
dir $dir
sentinel monitor $name 127.0.0.1 $master 2
sentinel down-after-milliseconds $name 1000
sentinel failover-timeout $name 5000
sentinel parallel-syncs $name 1
CONF
  start_server "$dir" sentinel "$dir/sentinel-$i.conf" --sentinel --port PORT --loglevel warning
  sentinels+=("$port")
done

knows_all() { # a Sentinel that sees the replica and both other Sentinels, and has its quorum
  local p=$1
  [ "$(redis-cli -p "$p" sentinel replicas "$name" | grep -c '^name$')" -ge 1 ] &&
    [ "$(redis-cli -p "$p" sentinel sentinels "$name" | grep -c '^name$')" -ge 2 ] &&
    redis-cli -p "$p" sentinel ckquorum "$name" | grep -q '^OK'
}
for s in "${sentinels[@]}"; do wait_for 30 "sentinel on port $s" knows_all "$s"; done

echo "export REDIS_SENTINEL_ADDRS=$(for s in "${sentinels[@]}"; do printf '127.0.0.1:%s,' "$s"; done | sed 's/,$//')"
echo "export REDIS_SENTINEL_MASTER=$name"
