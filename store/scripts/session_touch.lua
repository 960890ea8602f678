-- session_touch: the check of a session that a signed-in request makes: whether it is alive, and
-- if so its life extended to a full TTL from now. An expired session leaves the hash.
-- KEYS[1]  hash {u:<user>}:s (session id → when the session expires, Unix ms)
--          KEYS[2] (while the keyspace may hold sessions of layout 4) the session's layout-4
--          string {u:<user>}:sess:<digest>, with its TTL: found alive, it moves into the hash
-- ARGV[1]  the session's id   ARGV[2] now (Unix ms)   ARGV[3] session TTL (ms)
-- Reply    1 when the session is alive (and now extended), 0 when it is unknown or expired.
-- Writes   only KEYS, and never a session that is not there: a session ended meanwhile stays
--          ended. (A layout-4 index entry left behind is dropped by the migration.)
-- Repeat   a second run sets the same expiry (or a later one: an expiry never moves back, so that
--          a server whose clock is behind cannot shorten a session).
-- Revision none: sessions are never read by a response (store/scripts.go, unrevised).
local exp = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0')
local now = tonumber(ARGV[2])
local moved = false
if exp == 0 and KEYS[2] then
  local left = redis.call('PTTL', KEYS[2])
  if left > 0 then
    exp, moved = now + left, true
  elseif left == -1 then
    redis.call('DEL', KEYS[2]) -- a session string without an expiry is no session
  end
end
if exp <= now then
  if exp > 0 then redis.call('HDEL', KEYS[1], ARGV[1]) end
  return 0
end
-- The session's new place is written before its old one goes: on a full Redis the HSET is
-- refused first, and the session stays where it was (TestSessionMoveOnFullRedis).
local next = now + tonumber(ARGV[3])
if next > exp or moved then redis.call('HSET', KEYS[1], ARGV[1], math.max(next, exp)) end
if moved then redis.call('DEL', KEYS[2]) end
return 1
