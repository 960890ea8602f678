-- sessions_end: end sessions of a user — one (log out), all (logOutEverywhere, an account's
-- deletion), or all but the current one after setting a new password hash (changePassword,
-- resetPassword) — in one step on the user's slot, and announce the ended sessions on the user's
-- sessions channel, so that the live streams they opened end on every replica.
-- KEYS[1]  user hash {u:<user>} (its sessions: field s:<session id> → expiry ms; lib/sessions.lua)
--          KEYS[2] (with ARGV[7] = "1": while the keyspace may hold sessions of layouts 5 to 7)
--          the user's sessions hash of those layouts {u:<user>}:s (session id → expiry ms), whose
--          sessions end too (the kept one moves into KEYS[1])
--          KEYS[3..] (while the keyspace may hold sessions of layout 4, with "listed") the
--          layout-4 strings of the listed sessions, which go too
-- ARGV[1]  "all": every session of the user ends; "listed": only those ARGV[8..] names
-- ARGV[2]  a session id to keep ("" for none)   ARGV[3] the password hash the caller checked the
--          current password against ("" to leave the password alone)   ARGV[4] the new
--          password hash   ARGV[5] the user's sessions channel {u:<user>}:ev:sessions
--          ARGV[6] "1": SPUBLISH (sharded)   ARGV[7] "1" when KEYS[2] is the hash of layouts 5
--          to 7   ARGV[8..] session ids (with "listed")
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
--          them out), so no cached response can go stale (store/scripts.go, unrevised).
--!include announce
--!include sessions
local u, keep = KEYS[1], ARGV[2]
local apart = nil
if ARGV[7] == '1' then apart = KEYS[2] end
if ARGV[3] ~= '' then
  local pass = redis.call('HGET', u, 'pass')
  if pass ~= ARGV[3] and pass ~= ARGV[4] then
    return redis.error_reply('FORBIDDEN the password was changed meanwhile: sign in again')
  end
  redis.call('HSET', u, 'pass', ARGV[4])
end
local ids = {}
if ARGV[1] == 'all' then
  for _, s in ipairs(user_sessions(u)) do ids[#ids + 1] = s[2] end
  if apart then
    -- The kept session moves first (a write that grows, before those that shrink).
    local exp = redis.call('HGET', apart, keep)
    if keep ~= '' and exp and redis.call('HEXISTS', u, session_field(keep)) == 0 then
      redis.call('HSET', u, session_field(keep), exp)
    end
    for _, id in ipairs(redis.call('HKEYS', apart)) do
      if redis.call('HEXISTS', u, session_field(id)) == 0 then ids[#ids + 1] = id end
    end
    redis.call('DEL', apart)
  end
else
  for i = 8, #ARGV do ids[#ids + 1] = ARGV[i] end
end
local first = 3
if not apart then first = 2 end
for i = first, #KEYS do redis.call('DEL', KEYS[i]) end
local ended = {}
for _, id in ipairs(ids) do
  if id ~= keep then
    redis.call('HDEL', u, session_field(id))
    if apart then redis.call('HDEL', apart, id) end
    ended[#ended + 1] = id
  end
end
announce_sessions_ended(ended, ARGV[5], ARGV[6])
return 1
