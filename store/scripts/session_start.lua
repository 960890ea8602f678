-- session_start: start a session of a user in the user's sessions hash, which keeps only the
-- sessions still alive and at most ARGV[4] of them.
-- KEYS[1]  hash {u:<user>}:s (session id → when the session expires, Unix ms; each use moves it,
--          see session_touch)   KEYS[2] user hash {u:<user>}
-- ARGV[1]  the new session's id   ARGV[2] session TTL (ms)   ARGV[3] now (Unix ms)
--          ARGV[4] the most sessions a user keeps   ARGV[5] the password hash the caller checked
--          the password against
-- Reply    the ids of the sessions ended to make room (those used longest ago).
-- Errors   FORBIDDEN when the password hash is no longer ARGV[5]: a password change (which
--          ends every other session) came between the check and the session, which would
--          outlive it.
-- Prune    an expired session leaves the hash; over the cap, the sessions that expire first (the
--          ones used longest ago) end.
-- Writes   only KEYS (see create_comment).
-- Repeat   a second run sets the same session again.
-- Revision none: sessions are never read by a response (store/scripts.go, unrevised).
local sessions = KEYS[1]
local ttl, now, cap = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
if redis.call('HGET', KEYS[2], 'pass') ~= ARGV[5] then
  return redis.error_reply('FORBIDDEN the password changed meanwhile')
end
local live, expired = {}, {}
local all = redis.call('HGETALL', sessions)
for i = 1, #all, 2 do
  local id, exp = all[i], tonumber(all[i + 1])
  if id ~= ARGV[1] then
    if exp <= now then
      expired[#expired + 1] = id
    else
      live[#live + 1] = {exp, id}
    end
  end
end
-- The new session first: on a full Redis its HSET is refused before anything else changed.
redis.call('HSET', sessions, ARGV[1], now + ttl)
for _, id in ipairs(expired) do redis.call('HDEL', sessions, id) end
local ended = {}
local excess = #live + 1 - cap
if excess > 0 then
  table.sort(live, function(a, b) return a[1] < b[1] end)
  for i = 1, math.min(excess, #live) do
    redis.call('HDEL', sessions, live[i][2])
    ended[#ended + 1] = live[i][2]
  end
end
return ended
