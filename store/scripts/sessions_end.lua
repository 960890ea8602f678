-- sessions_end: end sessions of a user — one (log out), all (logOutEverywhere), or all but the
-- current one after setting a new password hash (changePassword) — in one step on the user's slot,
-- and announce the ended sessions on the user's sessions channel, so that the live streams they
-- opened end on every replica.
-- KEYS[1]  zset {u:<user>}:sessions (token digest → expiry ms)   KEYS[2] user hash {u:<user>}
--          KEYS[3..] the session strings {u:<user>}:sess:<digest> of the digests ARGV[7..]
-- ARGV[1]  "all": every member of the index must end; those listed end now, and when the index
--          holds others (sessions started after the caller read it) the reply is 0, so that the
--          caller reads it again and ends them too; "listed": end only those listed
-- ARGV[2]  a digest to keep ("" for none)   ARGV[3] the password hash the caller checked the
--          current password against ("" to leave the password alone)   ARGV[4] the new
--          password hash   ARGV[5] the user's sessions channel {u:<user>}:ev:sessions
--          ARGV[6] "1": SPUBLISH (sharded)   ARGV[7..] digests, one per KEYS[3..]
-- Reply    1 when done, 0 when ARGV[1] is "all" and the index holds a digest not listed. The
--          password changes and the listed sessions end either way: once the hash is the new
--          one no session can start with the old password (session_start checks it), so a
--          storm of log-ins with the old password cannot keep the change from completing.
--          Error "FORBIDDEN ..." when the password hash is neither ARGV[3] nor ARGV[4] (it
--          changed since the caller checked it).
-- Publish  {"sessions":"<digest> <digest> ..."}: every listed digest but the kept one, whether
--          or not it was still stored (a repeat announces again what already ended: the streams
--          of those sessions are gone, and nothing else listens for them).
-- Writes   only KEYS (see create_comment); the channel is in their slot.
-- Repeat   a second run finds the new hash and the sessions gone, and changes nothing but
--          announcing the same ends again.
-- Revision none: sessions and the password hash are never read by a response (userFields leaves
--          the hash out), so no cached response can go stale (store/scripts.go, unrevised).
local index = KEYS[1]
local listed = {}
for i = 7, #ARGV do listed[ARGV[i]] = true end
local complete = 1
if ARGV[1] == 'all' then
  for _, d in ipairs(redis.call('ZRANGE', index, 0, -1)) do
    if not listed[d] and d ~= ARGV[2] then complete = 0 end
  end
end
if ARGV[3] ~= '' then
  local pass = redis.call('HGET', KEYS[2], 'pass')
  if pass ~= ARGV[3] and pass ~= ARGV[4] then
    return redis.error_reply('FORBIDDEN the password was changed meanwhile: sign in again')
  end
  redis.call('HSET', KEYS[2], 'pass', ARGV[4])
end
local ended = {}
for i = 7, #ARGV do
  if ARGV[i] ~= ARGV[2] then
    redis.call('DEL', KEYS[i - 4])
    redis.call('ZREM', index, ARGV[i])
    ended[#ended + 1] = ARGV[i]
  end
end
if #ended > 0 then
  local msg = '{"sessions":"' .. table.concat(ended, ' ') .. '"}'
  if ARGV[6] == '1' then
    redis.call('SPUBLISH', ARGV[5], msg)
  else
    redis.call('PUBLISH', ARGV[5], msg)
  end
end
return complete
