# Shared helpers of redis-cluster.sh and redis-sentinel.sh; sourced, not run.

# port_free PORT: true when nothing listens on 127.0.0.1:PORT.
port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# pick_port: prints a random port that is free, with its cluster bus port (+10000), and not
# handed out before by this script.
_picked=" "
pick_port() {
  local p
  for _ in $(seq 1 200); do
    p=$((20000 + RANDOM % 30000))
    case "$_picked" in *" $p "*) continue ;; esac
    if port_free "$p" && port_free $((p + 10000)); then
      _picked="$_picked$p "
      echo "$p"
      return 0
    fi
  done
  echo "no free port found" >&2
  return 1
}

# wait_for DESCRIPTION COMMAND...: runs COMMAND every 0.1s until it succeeds, for up to 30s.
wait_for() {
  local what=$1
  shift
  for _ in $(seq 1 300); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 0.1
  done
  echo "timed out waiting for $what" >&2
  return 1
}

# ping PORT: true when the server on PORT answers PONG.
ping() { [ "$(redis-cli -p "$1" ping 2>/dev/null)" = PONG ]; }

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
