-- move_post_texts: move a post's body out of its hash into its thread's bodies, so that the hash
-- keeps only short values (its title and url too, when they are at most 64 bytes long) and is
-- listpack-encoded again (layout 4 → 5; see lib/post_texts.lua). An empty url leaves the hash too.
-- KEYS[1]  post hash {p:<id>}   KEYS[2] the thread's bodies {p:<id>}:c:body
-- Reply    1 when it moved something, else 0.
-- Writes   only KEYS (see create_comment for why).
-- Repeat   a text moved is not in the hash any more: a second run moves nothing. A text in the
--          hash is the newer one (a process of layout 4 writes only the hash), so it replaces the
--          one apart.
-- Revision KEYS[#KEYS] is the revision counter of the keys' aggregate; every run raises it, so
--          that a cached response that read the aggregate is known to be stale (store/revisions.go).
--!include post_texts
redis.call('INCR', KEYS[#KEYS])
local p, texts = KEYS[1], KEYS[2]
local all = redis.call('HGETALL', p)
local found, rest, move = {}, {}, false
for j = 1, #all, 2 do
  local field, v = all[j], all[j + 1]
  if post_text_fields[field] then
    found[field] = v
    move = move or field == 'body' or (field == 'url' and v == '')
  else
    rest[#rest + 1] = field; rest[#rest + 1] = v
  end
end
if not move then return 0 end
-- The hash is written anew: a hash once a hashtable stays one, whatever its values become, so
-- HDEL alone would save nothing.
local ttl = redis.call('PTTL', p)
redis.call('DEL', p)
if #rest > 0 then redis.call('HSET', p, unpack(rest)) end
for _, field in ipairs({'title', 'body', 'url'}) do
  if found[field] then set_post_text(p, texts, field, found[field]) end
end
if ttl > 0 then redis.call('PEXPIRE', p, ttl) end
return 1
