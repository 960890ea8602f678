-- account_delete: reduce a user's hash to the marker of a deleted account and drop the user's
-- private keys of the user's slot (saved posts, blocks, drafts, feeds, karma, ...).
-- KEYS[1]  user hash {u:<user>}   KEYS[2..#KEYS-1] keys of the user's slot to drop
-- ARGV[1]  "1" to erase the user's posts and comments, "0" to keep them without author
-- Reply    "1" when the account's content is to be erased (once asked, it stays asked), else "0".
-- Errors   NOTFOUND (no such user).
-- Writes   the marker keeps created (the name stays reserved for ever: signup refuses it),
--          deleted = 1, erase, and email until the deletion's last step has released the address.
-- Repeat   a second run finds the marker and keeps it (erase may only turn on).
-- Revision KEYS[#KEYS] is the revision counter of the keys' aggregate; every run raises it, so
--          that a cached response that read the aggregate is known to be stale (store/revisions.go).
redis.call('INCR', KEYS[#KEYS])
local u = KEYS[1]
local created = redis.call('HGET', u, 'created')
if not created then return redis.error_reply('NOTFOUND no such user') end
local email = redis.call('HGET', u, 'email')
local erase = '0'
if ARGV[1] == '1' or redis.call('HGET', u, 'erase') == '1' then erase = '1' end
redis.call('DEL', u)
redis.call('HSET', u, 'created', created, 'deleted', '1', 'erase', erase)
if email then redis.call('HSET', u, 'email', email) end
for i = 2, #KEYS - 1 do redis.call('UNLINK', KEYS[i]) end
return erase
