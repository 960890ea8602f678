# Shared helpers of redis-cluster.sh and redis-sentinel.sh; sourced, not run.

# port_free PORT: true when nothing listens on 127.0.0.1:PORT.
port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# pick_port sets $port to a random port that is free, with its cluster bus port (+10000), and not
# handed out before by this script. Ports and bus ports stay below 32768, where Linux hands out
# ephemeral ports for outgoing connections.
_picked=" "
pick_port() {
  local p
  for _ in $(seq 1 500); do
    p=$((10000 + RANDOM % 12768))
    case "$_picked" in *" $p "*) continue ;; esac
    if port_free "$p" && port_free $((p + 10000)); then
      _picked="$_picked$p "
      port=$p
      return 0
    fi
  done
  echo "no free port found" >&2
  return 1
}

# wait_for SECONDS DESCRIPTION COMMAND...: runs COMMAND every 0.1s until it succeeds.
wait_for() {
  local tries=$(($1 * 10)) what=$2
  shift 2
  for _ in $(seq 1 "$tries"); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 0.1
  done
  echo "timed out waiting for $what" >&2
  return 1
}

# ours PORT PIDFILE: true when the server answering on PORT is the one whose pid PIDFILE holds,
# not another process that took the port first (the cluster and Sentinel scripts pick ports at
# the same time, each unaware of the other's choices).
ours() {
  local pid
  pid=$(cat "$2" 2>/dev/null) || return 1
  redis-cli -p "$1" info server 2>/dev/null | tr -d '\r' | grep -qx "process_id:$pid"
}

# start_server DIR NAME [redis-server arguments...] starts a daemonized redis-server on a free
# port, which it leaves in $port, and waits until it answers. NAME names its pid and log files;
# the literal PORT in an argument is replaced by the port. Another process may take the port
# between the choice and the start, so a server that does not come up is tried on another port.
start_server() {
  local dir=$1 name=$2 attempt pid
  shift 2
  for attempt in 1 2 3 4 5; do
    pick_port || return 1
    redis-server "${@//PORT/$port}" --daemonize yes --pidfile "$dir/$name-$port.pid" \
      --logfile "$dir/$name-$port.log" || true
    if wait_for 10 "$name on port $port" ours "$port" "$dir/$name-$port.pid"; then return 0; fi
    tail -3 "$dir/$name-$port.log" >&2 || true
    pid=$(cat "$dir/$name-$port.pid" 2>/dev/null) && kill "$pid" 2>/dev/null || true
    rm -f "$dir/$name-$port.pid"
  done
  return 1
}

# stop_all DIR: stops every server whose pid file is in DIR and waits for it to exit.
stop_all() {
  local dir=$1 f pid
  for f in "$dir"/*.pid; do
    [ -e "$f" ] || continue
    pid=$(cat "$f" 2>/dev/null) || continue
    kill "$pid" 2>/dev/null || true
  done
  for f in "$dir"/*.pid; do
    [ -e "$f" ] || continue
    pid=$(cat "$f" 2>/dev/null) || continue
    for _ in $(seq 1 100); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.05
    done
    kill -9 "$pid" 2>/dev/null || true
    rm -f "$f"
  done
}
