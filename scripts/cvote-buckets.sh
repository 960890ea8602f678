#!/usr/bin/env bash
# cvote-buckets.sh: bytes a comment vote costs in Redis for buckets of B comment numbers
# (store/keys.go commentVoteBucket), B = 0 being layout 5's hash per comment, in threads of several
# shapes; it chose B = 8 (docs/PERFORMANCE.md, "Comment votes in buckets"). It starts its own
# redis-server on a free port, writes the votes the way agora names them (key {p:<id>}:c:v<n/B>,
# field <n>:<voter>) with a Lua script, and prints used_memory's growth per vote, the keys and how
# many of them are hashtables, at hash-max-listpack-entries 128 (the project's bound) and 512
# (Redis's default).
#
#   scripts/cvote-buckets.sh [B ...]      # default: 0 4 8 16 32 64
set -euo pipefail
. "$(dirname "$0")/redis-lib.sh"
sizes=${*:-0 4 8 16 32 64}
dir=$(mktemp -d)
pick_port
redis-server --port "$port" --save '' --appendonly no --daemonize yes --pidfile "$dir/pid" --logfile "$dir/log" --dir "$dir"
stop() {
  local pid
  pid=$(cat "$dir/pid" 2>/dev/null) && kill "$pid" 2>/dev/null && while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
  rm -rf "$dir"
}
trap stop EXIT
cli() { redis-cli -p "$port" "$@"; }
wait_for 5 redis-server cli ping
cat >"$dir/fill.lua" <<'LUA'
-- ARGV: B (0: a hash per comment), threads, comments a thread, shape of the votes a comment gets
local B, T, C, shape = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4]
math.randomseed(7)
local function nvotes()
  local r = math.random()
  if shape == 'two' then return 2 end
  if shape == 'five' then return 5 end
  if shape == 'skewed' then -- mean about 3: most comments get few votes, a few many
    if r < 0.4 then return 0 elseif r < 0.7 then return math.random(1, 2) elseif r < 0.9 then return math.random(3, 6)
    elseif r < 0.98 then return math.random(7, 20) else return math.random(21, 60) end
  end
  -- hot: mean about 22
  if r < 0.5 then return math.random(0, 5) elseif r < 0.9 then return math.random(6, 30) else return math.random(31, 150) end
end
local votes = 0
for t = 1, T do
  local pid = tostring(100000 + t)
  for n = 1, C do
    for _ = 1, nvotes() do
      local voter = string.format('m%d_%05d', math.random(0, 499), 12345)
      if B == 0 then
        votes = votes + redis.call('HSET', '{p:' .. pid .. '}:c:' .. string.format('%012d', n) .. ':votes', voter, 1)
      else
        votes = votes + redis.call('HSET', '{p:' .. pid .. '}:c:v' .. math.floor(n / B), n .. ':' .. voter, 1)
      end
    end
  end
end
return votes
LUA
used() { cli info memory | sed -n 's/^used_memory:\([0-9]*\).*/\1/p' | tr -d '\r'; }
hashtables='local c, n = "0", 0 repeat local r = redis.call("SCAN", c, "COUNT", 1000) c = r[1] for _, k in ipairs(r[2]) do if redis.call("OBJECT", "ENCODING", k) == "hashtable" then n = n + 1 end end until c == "0" return n'
printf '%-8s %-22s %4s %8s %7s %10s %10s\n' entries thread B votes keys hashtables bytes/vote
for entries in 128 512; do
  cli config set hash-max-listpack-entries "$entries" >/dev/null
  for shape in "2000 10 two" "200 100 skewed" "20 1000 skewed" "200 100 five" "100 100 hot"; do
    set -- $shape
    for b in $sizes; do
      cli flushall >/dev/null
      m0=$(used)
      n=$(cli --eval "$dir/fill.lua" , "$b" "$1" "$2" "$3")
      m1=$(used)
      printf '%-8s %-22s %4s %8s %7s %10s %10s\n' "$entries" "$1x$2 $3" "$b" "$n" "$(cli dbsize)" "$(cli eval "$hashtables" 0)" $(((m1 - m0) / n))
    done
  done
done
