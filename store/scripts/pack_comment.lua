-- pack_comment: write a comment's hash of layout 5 packed (layout 5 → 6; see lib/comment_meta):
-- its parent, created, closes, depth and ord into the one field m, the author's name into n and
-- the author into a when the name is unknown (or the hash is a tombstone, which loses the name).
-- KEYS[1]  the comment's hash {p:<id>}:c:<number>
-- Reply    1 when it packed the hash, 0 when there was nothing to pack (packed already, no such
--          hash, or a removal marker, which keeps the shape of layout 5).
-- Writes   only KEYS[1], anew (DEL, then HSET of every field), so that a hash that had turned into
--          a hashtable is a listpack again when its fields allow it.
-- Repeat   a packed hash has m: a second run replies 0 and changes nothing.
-- Revision KEYS[#KEYS] is the revision counter of the keys' aggregate; every run raises it, so
--          that a cached response that read the aggregate is known to be stale (store/revisions.go).
--!include comment_meta
redis.call('INCR', KEYS[#KEYS])
local h = KEYS[1]
if redis.call('HEXISTS', h, 'm') == 1 or redis.call('HEXISTS', h, 'created') == 0 then return 0 end
local meta = cmeta(h)
-- A tombstone keeps its author but not the name (see delete_comment), which layout 5's deletion
-- left: no later step reaches it (an account's deletion walks its author's list, which it left).
if redis.call('HGET', h, 'deleted') == '1' then meta.aname = nil end
local all = redis.call('HGETALL', h)
local packed = {}
for _, name in ipairs(cmeta_old) do packed[name] = true end
local args = {}
for i = 1, #all, 2 do
  if not packed[all[i]] then
    args[#args + 1] = all[i]
    args[#args + 1] = all[i + 1]
  end
end
redis.call('DEL', h)
if #args > 0 then redis.call('HSET', h, unpack(args)) end
cmeta_set(h, meta)
return 1
