-- session_touch: the check of a session that a signed-in request makes: whether it is alive, and
-- if so its life extended to a full TTL from now. An expired session leaves the user's hash.
-- KEYS[1]  user hash {u:<user>} (its sessions: field s:<session id> → when the session expires,
--          Unix ms; lib/sessions.lua)
--          KEYS[2] (while the keyspace may hold sessions of layouts 5 to 7) the user's sessions
--          hash of those layouts {u:<user>}:s (session id → expiry): a session found there alive
--          moves into KEYS[1] with the others (fold_sessions)
--          KEYS[3] (while the keyspace may hold sessions of layout 4) the session's layout-4
--          string {u:<user>}:sess:<digest>, with its TTL: found alive, it moves into KEYS[1]
-- ARGV[1]  the session's id   ARGV[2] now (Unix ms)   ARGV[3] session TTL (ms)
--          ARGV[4] the most sessions a user keeps (for those folded from KEYS[2])
--          ARGV[5] the user's sessions channel {u:<user>}:ev:sessions   ARGV[6] "1": SPUBLISH
--          (sharded): the sessions a fold ends for the cap are announced as sessions_end.lua does
-- Reply    1 when the session is alive (and now extended), 0 when it is unknown or expired.
-- Writes   only KEYS, and never a session that is not there: a session ended meanwhile stays
--          ended; a session of an earlier layout moves only into the hash of an account with a
--          password hash, so that no user hash is made by a session. (A layout-4 index entry left
--          behind is dropped by the migration.)
-- Repeat   a second run sets the same expiry (or a later one: an expiry never moves back, so that
--          a server whose clock is behind cannot shorten a session).
-- Revision none: sessions are never read by a response (store/scripts.go, unrevised).
--!include announce
--!include sessions
local u, f = KEYS[1], session_field(ARGV[1])
local now = tonumber(ARGV[2])
local exp = tonumber(redis.call('HGET', u, f) or '0')
local moved, legacy = false, nil
if exp == 0 and (KEYS[2] or KEYS[3]) and redis.call('HEXISTS', u, 'pass') == 1 then
  if KEYS[2] then
    exp = tonumber(redis.call('HGET', KEYS[2], ARGV[1]) or '0')
    moved = exp > now
  end
  if exp == 0 and KEYS[3] then
    local left = redis.call('PTTL', KEYS[3])
    if left > 0 then
      exp, moved, legacy = now + left, true, KEYS[3]
    elseif left == -1 then
      redis.call('DEL', KEYS[3]) -- a session string without an expiry is no session
    end
  end
end
if exp <= now then
  if exp > 0 and not moved then redis.call('HDEL', u, f) end
  return 0
end
-- The session's new place is written before its old one goes: on a full Redis the HSET is
-- refused first, and the session stays where it was (TestSessionMoveOnFullRedis).
local next = now + tonumber(ARGV[3])
if next > exp or moved then redis.call('HSET', u, f, math.max(next, exp)) end
if legacy then redis.call('DEL', legacy) end
if KEYS[2] and fold_sessions(u, KEYS[2], now) > 0 then
  announce_sessions_ended(prune_sessions(u, now, tonumber(ARGV[4]), ARGV[1]), ARGV[5], ARGV[6])
end
return 1
