-- sessions_fold: move a user's sessions from the hash of their own that layouts 5 to 7 kept into
-- the user's hash (the migration from layout 7; store/layout_sessions.go), each with its expiry,
-- under the same id, so that no one is signed out.
-- KEYS[1]  user hash {u:<user>} (its sessions: field s:<session id> → expiry ms; lib/sessions.lua)
--          KEYS[2] the user's sessions hash of layouts 5 to 7 {u:<user>}:s (session id → expiry)
-- ARGV[1]  now (Unix ms)   ARGV[2] the most sessions a user keeps   ARGV[3] the user's sessions
--          channel {u:<user>}:ev:sessions   ARGV[4] "1": SPUBLISH (sharded)
-- Reply    how many sessions moved (those alive, of an account with a password hash).
-- Writes   only KEYS: the live sessions move (never to an earlier expiry than the user hash holds
--          for them), KEYS[2] goes, and so do the user's expired sessions; past the cap (a process
--          of layout 7 and one of layout 8 both started sessions), those used longest ago end.
--          The sessions of an account without a password hash (deleted) are dropped: no user
--          hash is made by a session.
-- Publish  the sessions ended for the cap, as sessions_end.lua does.
-- Repeat   a second run finds KEYS[2] gone and moves nothing.
-- Revision none: sessions are never read by a response (store/scripts.go, unrevised).
--!include announce
--!include sessions
local now = tonumber(ARGV[1])
local moved = fold_sessions(KEYS[1], KEYS[2], now)
if moved > 0 then announce_sessions_ended(prune_sessions(KEYS[1], now, tonumber(ARGV[2]), nil), ARGV[3], ARGV[4]) end
return moved
