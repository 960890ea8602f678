-- session_start: start a session of a user, indexed among the user's sessions, and keep the
-- index to the sessions still alive and to at most ARGV[5] of them.
-- KEYS[1]  string {u:<user>}:sess:<digest>, the new session   KEYS[2] zset {u:<user>}:sessions
--          (token digest → when the session expires, ms; a lower bound, since each use extends
--          a session without touching the index)   KEYS[3] user hash {u:<user>}
--          KEYS[4..] the session strings of the digests ARGV[7..] names, the index's members
--          when the caller read it
-- ARGV[1]  the new session's digest   ARGV[2] user key (the session's value)   ARGV[3] session
--          TTL (ms)   ARGV[4] now (Unix ms)   ARGV[5] the most sessions a user keeps
--          ARGV[6] the password hash the caller checked the password against
--          ARGV[7..] digests, one per KEYS[4..]
-- Reply    the digests of the sessions ended to make room (the oldest used).
-- Errors   FORBIDDEN when the password hash is no longer ARGV[6]: a password change (which
--          ends every other session) came between the check and the session, which would
--          outlive it.
-- Prune    a listed member whose session has expired leaves the index; the others get their
--          true expiry, so that over the cap the sessions used longest ago end first. A member
--          added after the caller read the index is left alone (the next start prunes it).
-- Writes   only KEYS (see create_comment).
-- Repeat   a second run sets the same session and index entry again.
-- Revision none: sessions are never read by a response (store/scripts.go, unrevised).
local ttl, now, cap = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local index = KEYS[2]
if redis.call('HGET', KEYS[3], 'pass') ~= ARGV[6] then
  return redis.error_reply('FORBIDDEN the password changed meanwhile')
end
local live = {}
for i = 7, #ARGV do
  local key, d = KEYS[i - 3], ARGV[i]
  local left = redis.call('PTTL', key)
  if left < 0 then
    redis.call('ZREM', index, d)
  else
    redis.call('ZADD', index, now + left, d)
    live[#live + 1] = {now + left, d, key}
  end
end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ttl)
redis.call('ZADD', index, now + ttl, ARGV[1])
local ended = {}
local excess = redis.call('ZCARD', index) - cap
if excess > 0 then
  table.sort(live, function(a, b) return a[1] < b[1] end)
  for i = 1, math.min(excess, #live) do
    redis.call('DEL', live[i][3])
    redis.call('ZREM', index, live[i][2])
    ended[#ended + 1] = live[i][2]
  end
end
return ended
