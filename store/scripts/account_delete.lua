-- account_delete: reduce a user's hash to the marker of a deleted account and drop the user's
-- private keys of the user's slot (saved posts, blocks, drafts, feeds, karma, ...).
-- KEYS[1]  user hash {u:<user>}   KEYS[2..#KEYS-1] keys of the user's slot to drop
-- ARGV[1]  "1" to erase the user's posts and comments, "0" to keep them without author
--          ARGV[2] the user's sessions channel {u:<user>}:ev:sessions   ARGV[3] "1": SPUBLISH
--          (sharded)
-- Reply    "1" when the account's content is to be erased (once asked, it stays asked), else "0".
-- Errors   NOTFOUND (no such user).
-- Writes   the marker keeps created (the name stays reserved for ever: signup refuses it),
--          deleted = 1, erase, and email (with emailv = 1 when it was verified, which decides how
--          it is released) until the deletion's last step has released the address.
-- Publish  {"sessions":"<id> <id> ..."}: the user's sessions (fields s:<id> of the user hash,
--          lib/sessions.lua), which end with the hash, so that the live streams they opened end
--          on every replica (as sessions_end.lua announces them).
-- Repeat   a second run finds the marker and keeps it (erase may only turn on); it holds no
--          session, so nothing is announced again.
-- Revision KEYS[#KEYS] is the revision counter of the keys' aggregate; every run raises it, so
--          that a cached response that read the aggregate is known to be stale (store/revisions.go).
--!include announce
--!include sessions
redis.call('INCR', KEYS[#KEYS])
local u = KEYS[1]
local created = redis.call('HGET', u, 'created')
if not created then return redis.error_reply('NOTFOUND no such user') end
local email = redis.call('HGET', u, 'email')
local emailv = redis.call('HGET', u, 'emailv')
local erase = '0'
if ARGV[1] == '1' or redis.call('HGET', u, 'erase') == '1' then erase = '1' end
local ended = {}
for _, s in ipairs(user_sessions(u)) do ended[#ended + 1] = s[2] end
redis.call('DEL', u)
redis.call('HSET', u, 'created', created, 'deleted', '1', 'erase', erase)
if email then redis.call('HSET', u, 'email', email) end
if email and emailv == '1' then redis.call('HSET', u, 'emailv', '1') end
for i = 2, #KEYS - 1 do redis.call('UNLINK', KEYS[i]) end
announce_sessions_ended(ended, ARGV[2], ARGV[3])
return erase
