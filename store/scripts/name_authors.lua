-- name_authors: give posts and comments of one thread their author's name (field aname), which
-- items written before names were kept lack (rebuild; see store/author_names.go).
-- KEYS[1..n]  post and comment hashes, all {p:<id>}
-- ARGV[2i-1]  the author KEYS[i] had when read   ARGV[2i] that author's name
-- Reply    how many hashes got a name.
-- Writes   aname of a hash that still has that author and no name yet; a hash deleted or gone
--          since, or by another author, is left alone.
-- Repeat   a second run finds the names set and changes nothing.
-- Revision KEYS[#KEYS] is the revision counter of the keys' aggregate; every run raises it, so
--          that a cached response that read the aggregate is known to be stale (store/revisions.go).
--!include comment_meta
redis.call('INCR', KEYS[#KEYS])
local n = 0
for i = 1, #KEYS - 1 do
  local h = KEYS[i]
  if redis.call('HGET', h, 'deleted') == '1' then
    -- A tombstone keeps no name (delete_comment); the caller read the comment before it was one.
  elseif redis.call('HEXISTS', h, 'm') == 1 then
    -- A packed comment (layout 6, lib/comment_meta) keeps its name in n, its author in a without one.
    local t = cmeta(h)
    if t.author == ARGV[2 * i - 1] and not t.aname then
      t.aname = ARGV[2 * i]
      cmeta_set(h, t)
      n = n + 1
    end
  elseif redis.call('HGET', h, 'author') == ARGV[2 * i - 1] and redis.call('HGET', h, 'gone') ~= '1'
    and redis.call('HEXISTS', h, 'aname') == 0 then
    redis.call('HSET', h, 'aname', ARGV[2 * i])
    n = n + 1
  end
end
return n
