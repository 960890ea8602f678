-- sessions_end: end sessions of a user — one (log out), all (logOutEverywhere), or all but the
-- current one after setting a new password hash (changePassword) — in one step on the user's slot,
-- and announce the ended sessions on the user's sessions channel, so that the live streams they
-- opened end on every replica.
-- KEYS[1]  hash {u:<user>}:s (session id → expiry ms)   KEYS[2] user hash {u:<user>}
--          KEYS[3..] (while the keyspace may hold sessions of layout 4, with "listed") the
--          layout-4 strings of the listed sessions, which go too
-- ARGV[1]  "all": every session of the hash ends; "listed": only those ARGV[7..] names
-- ARGV[2]  a session id to keep ("" for none)   ARGV[3] the password hash the caller checked the
--          current password against ("" to leave the password alone)   ARGV[4] the new
--          password hash   ARGV[5] the user's sessions channel {u:<user>}:ev:sessions
--          ARGV[6] "1": SPUBLISH (sharded)   ARGV[7..] session ids (with "listed")
-- Reply    1. Error "FORBIDDEN ..." when the password hash is neither ARGV[3] nor ARGV[4] (it
--          changed since the caller checked it).
-- Publish  {"sessions":"<id> <id> ..."}: every session ended but the kept one — with "listed"
--          every listed id, whether or not it was still stored (a repeat announces again what
--          already ended: the streams of those sessions are gone, and nothing else listens for
--          them).
-- Writes   only KEYS (see create_comment); the channel is in their slot.
-- Repeat   a second run finds the new hash and the sessions gone, and changes nothing but
--          announcing the same ends again.
-- Revision none: sessions and the password hash are never read by a response (userFields leaves
--          the hash out), so no cached response can go stale (store/scripts.go, unrevised).
--!include announce
local sessions = KEYS[1]
if ARGV[3] ~= '' then
  local pass = redis.call('HGET', KEYS[2], 'pass')
  if pass ~= ARGV[3] and pass ~= ARGV[4] then
    return redis.error_reply('FORBIDDEN the password was changed meanwhile: sign in again')
  end
  redis.call('HSET', KEYS[2], 'pass', ARGV[4])
end
local ids = {}
if ARGV[1] == 'all' then
  ids = redis.call('HKEYS', sessions)
else
  for i = 7, #ARGV do ids[#ids + 1] = ARGV[i] end
end
for i = 3, #KEYS do redis.call('DEL', KEYS[i]) end
local ended = {}
for _, id in ipairs(ids) do
  if id ~= ARGV[2] then
    redis.call('HDEL', sessions, id)
    ended[#ended + 1] = id
  end
end
if #ended > 0 then
  announce(ARGV[5], ARGV[6], '{"sessions":"' .. table.concat(ended, ' ') .. '"}')
end
return 1
