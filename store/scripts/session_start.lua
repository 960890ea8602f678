-- session_start: start a session of a user, a field of the user's hash, which keeps only the
-- sessions still alive and at most ARGV[4] of them.
-- KEYS[1]  user hash {u:<user>} (its sessions: field s:<session id> → when the session expires,
--          Unix ms; each use moves it, see session_touch)
--          KEYS[2] (while the keyspace may hold sessions of layouts 5 to 7) the user's sessions
--          hash of those layouts {u:<user>}:s, folded into KEYS[1] (lib/sessions.lua)
-- ARGV[1]  the new session's id   ARGV[2] session TTL (ms)   ARGV[3] now (Unix ms)
--          ARGV[4] the most sessions a user keeps   ARGV[5] the password hash the caller checked
--          the password against   ARGV[6] the user's sessions channel {u:<user>}:ev:sessions
--          ARGV[7] "1": SPUBLISH (sharded)
-- Reply    the ids of the sessions ended to make room (those used longest ago).
-- Publish  {"sessions":"<id> <id> ..."} when sessions ended to make room, as sessions_end.lua
--          does, so that the live streams they opened end on every replica.
-- Errors   FORBIDDEN when the password hash is no longer ARGV[5]: a password change (which
--          ends every other session) came between the check and the session, which would
--          outlive it. (A deleted account has no password hash: no session starts there.)
-- Prune    an expired session leaves the hash; over the cap, the sessions that expire first (the
--          ones used longest ago) end.
-- Writes   only KEYS (see create_comment).
-- Repeat   a second run sets the same session again (and ends nothing more).
-- Revision none: sessions are never read by a response (store/scripts.go, unrevised; the user's
--          reads name their fields, userFields, and no field of theirs starts with 's:').
--!include announce
--!include sessions
local u = KEYS[1]
local ttl, now, cap = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
if redis.call('HGET', u, 'pass') ~= ARGV[5] then
  return redis.error_reply('FORBIDDEN the password changed meanwhile')
end
-- The new session first: on a full Redis its HSET is refused before anything else changed.
redis.call('HSET', u, session_field(ARGV[1]), now + ttl)
fold_sessions(u, KEYS[2], now)
local ended = prune_sessions(u, now, cap, ARGV[1])
announce_sessions_ended(ended, ARGV[6], ARGV[7])
return ended
