#!/usr/bin/env bash
# Runs check.mjs (Apollo Client and urql, paging both ways and persisted queries) against a fresh
# agora: installs the clients from package-lock.json, builds the server, starts it on a free
# loopback port with its embedded Redis (whatever Redis the environment names), runs the check,
# and stops the server. Needs Go and Node 18 or later.
#
#   scripts/client-check/run.sh
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"

npm ci --prefix "$here" --no-audit --no-fund --loglevel=error
work=$(mktemp -d "${TMPDIR:-/tmp}/agora-client-check.XXXXXX")
pid=
cleanup() {
  if [ -n "$pid" ]; then
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

(cd "$root" && go build -o "$work/agora" .)
port=$(node -e 'const s = require("net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); })')
# The embedded store, empty at every start, whatever Redis the environment names (CI exports its
# test deployments' settings).
env -u REDIS_URL -u REDIS_CLUSTER_ADDRS -u REDIS_SENTINEL_ADDRS -u REDIS_SENTINEL_MASTER \
  "$work/agora" -addr "127.0.0.1:$port" >"$work/agora.log" 2>&1 &
pid=$!
if ! node -e '
  const end = Date.now() + 30000;
  (async () => {
    while (Date.now() < end) {
      try { if ((await fetch(process.argv[1])).ok) return; } catch {}
      await new Promise((r) => setTimeout(r, 100));
    }
    process.exit(1);
  })();' "http://127.0.0.1:$port/readyz"; then
  cat "$work/agora.log"
  echo "agora did not become ready on port $port"
  exit 1
fi
rc=0
node "$here/check.mjs" "http://127.0.0.1:$port/query" || rc=$?
if [ "$rc" -ne 0 ]; then
  echo "--- agora log"
  cat "$work/agora.log"
fi
exit "$rc"
