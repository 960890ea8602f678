-- sessions_move: move sessions of a user from layout 4 — a string each, {u:<user>}:sess:<digest>
-- with the session's TTL, indexed in the zset {u:<user>}:sessions — into the user's sessions hash
-- (layout_sessions.go), each with the expiry its TTL gave it.
-- KEYS[1]  hash {u:<user>}:s (session id → expiry, Unix ms)   KEYS[2] zset {u:<user>}:sessions
--          (layout 4's index: digest → expiry ms)   KEYS[3..] the session strings of the digests
--          ARGV[2..]
-- ARGV[1]  now (Unix ms)   ARGV[2..] the sessions' digests (64 hex digits; the id is the first 32)
-- Reply    how many sessions moved (those still alive).
-- Writes   only KEYS: a live session gets its expiry in the hash (never an earlier one than the
--          hash holds), its string and index entry go, and so do those of an expired one; the
--          index goes once it is empty (Redis drops an empty zset).
-- Repeat   a second run finds the strings gone and moves nothing.
-- Revision none: sessions are never read by a response (store/scripts.go, unrevised).
local now = tonumber(ARGV[1])
local moved = 0
for i = 2, #ARGV do
  local key, d = KEYS[i + 1], ARGV[i]
  local left = redis.call('PTTL', key)
  if left > 0 then
    local id = string.sub(d, 1, 32)
    local exp = now + left
    if exp > tonumber(redis.call('HGET', KEYS[1], id) or '0') then
      redis.call('HSET', KEYS[1], id, exp)
    end
    moved = moved + 1
  end
  redis.call('DEL', key)
  redis.call('ZREM', KEYS[2], d)
end
return moved
