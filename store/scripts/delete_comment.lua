-- delete_comment: delete a comment. One with replies in the tree becomes a tombstone (deleted, its
-- body dropped, its replies kept); one without is removed for good, and so is every tombstoned
-- (deleted or removed) ancestor that this leaves without replies, so no tombstone is ever left
-- childless in the tree. A comment that holds removed comments out of the tree (held > 0, see
-- moderate_comment), or that is removed itself, leaves the tree but keeps its hash, so that a
-- restore can bring it back; a removed comment deleted by its author only loses its text.
-- KEYS[1]  post hash {p:<id>}   KEYS[2] thread ids set {p:<id>}:c:ids   KEYS[3] the thread's
--          bodies {p:<id>}:c:body   KEYS[4..] seven keys per
--          comment of the chain ARGV[3..]: its hash {p:<id>}:c:<n>, its votes bucket
--          {p:<id>}:c:v<bucket> (see lib/comment_votes), its reply orders :rt, :rs, :rb and :rc
--          (for "0", the post's top-level orders), and its votes hash of layout 5 :votes;
--          KEYS[#KEYS - 1] the
--          thread's live bitmap {p:<id>}:c:live, whose bit of the comment (ord) clears with the
--          live count
-- ARGV[1]  the deleting user key   ARGV[2] TTL in seconds of the marker a removed comment leaves
-- ARGV[3..] the chain: the comment's number, its parent's, and so on up to the first ancestor
--          that is not removed with it, or "0" (the caller reads it beforehand; parents never
--          change)
-- Reply    {"tombstone" | "removed", how many comments left the tree}; {"again"} when the chain
--          is too short (an ancestor's replies changed since it was read): read it again.
-- Errors   NOTFOUND (no post, no comment), FORBIDDEN (not the author).
-- Writes   only KEYS (see create_comment for why): the chain's hashes, votes and indexes (a
--          comment removed for good takes its votes out of its bucket, which other comments share); the
--          post's comments (live count); the ids set. It reads everything it needs before its
--          first write, so "again" leaves no trace.
-- Names    a tombstone keeps its author but not the author's name (lib/comment_meta cmeta_unname):
--          no reader shows a deleted comment's author, and an erased account leaves no name.
-- Repeat   a second run finds the tombstone, or the removal marker, and replies as the first did
--          with a count of 0.
-- Revision KEYS[#KEYS] is the revision counter of the keys' aggregate; every run raises it, so
--          that a cached response that read the aggregate is known to be stale (store/revisions.go).
--!include comment_meta
--!include comment_votes
redis.call('INCR', KEYS[#KEYS])
local post, ids, bodies = KEYS[1], KEYS[2], KEYS[3]
local chain = {}
for i = 3, #ARGV do chain[#chain + 1] = ARGV[i] end
-- unlive clears the comment's bit in the live bitmap, after the live count has moved; a thread
-- left with no live comment drops its bitmap, which then holds no bit.
local function unlive(h)
  local ord = cmeta(h).ord
  if ord then redis.call('SETBIT', KEYS[#KEYS - 1], ord, 0) end
  if tonumber(redis.call('HGET', post, 'comments') or '0') <= 0 then redis.call('UNLINK', KEYS[#KEYS - 1]) end
end
local function key(i, part) -- part 0 hash, 1 votes bucket, 2..5 the reply orders, 6 the votes of layout 5 of chain[i]
  return KEYS[4 + 7 * (i - 1) + part]
end
if not redis.call('HGET', post, 'author') or redis.call('HGET', post, 'deleted') == '1' then
  return redis.error_reply('NOTFOUND no such post')
end
local c = key(1, 0)
local meta = cmeta(c)
local author = meta.author
if not author then return redis.error_reply('NOTFOUND no such comment') end
local gone = not meta.created
if author ~= ARGV[1] then
  if gone then return redis.error_reply('NOTFOUND no such comment') end
  return redis.error_reply('FORBIDDEN only the author can delete a comment')
end
if gone then return {'removed', 0} end
if redis.call('HGET', c, 'deleted') == '1' then return {'tombstone', 0} end
if redis.call('HGET', c, 'removed') == '1' then
  -- Removed: out of the live count already, and in its place as a tombstone or held out of the
  -- tree; it only loses its text.
  redis.call('HSET', c, 'deleted', '1')
  cmeta_unname(c)
  redis.call('HDEL', c, 'body')
  redis.call('HDEL', bodies, cbody(chain[1]))
  redis.call('HINCRBY', c, 'ver', 1)
  return {'tombstone', 0}
end
if creplies(c) > 0 then
  redis.call('HINCRBY', post, 'comments', -1)
  unlive(c)
  redis.call('HINCRBY', post, 'ver', 1) -- its MOST_COMMENTS ranking moves
  redis.call('HSET', c, 'deleted', '1')
  cmeta_unname(c)
  redis.call('HDEL', c, 'body')
  redis.call('HDEL', bodies, cbody(chain[1]))
  redis.call('HINCRBY', c, 'ver', 1)
  return {'tombstone', 0}
end
-- Find how far the removal reaches, reading only: chain[1..n] go, chain[n + 1] stays.
local n = 1
while true do
  local parent = cmeta(key(n, 0)).parent
  if chain[n + 1] ~= parent then return {'again'} end
  if parent == '0' then break end
  local p = key(n + 1, 0)
  local tomb = redis.call('HGET', p, 'deleted') == '1' or redis.call('HGET', p, 'removed') == '1'
  if creplies(p) > 1 or not tomb then break end
  n = n + 1
end
redis.call('HINCRBY', post, 'comments', -1)
unlive(c)
redis.call('HINCRBY', post, 'ver', 1)
local kept = false
for i = 1, n do
  local num, parent, h = chain[i], chain[i + 1], key(i, 0)
  for part = 2, 5 do redis.call('ZREM', key(i + 1, part), num) end
  if parent ~= '0' then redis.call('HINCRBY', key(i + 1, 0), 'replies', -1) end
  if redis.call('HGET', h, 'removed') == '1' or tonumber(redis.call('HGET', h, 'held') or '0') > 0 then
    -- It holds what a restore may bring back: it leaves the tree, held by its parent.
    if i == 1 then
      redis.call('HSET', h, 'deleted', '1')
      cmeta_unname(h)
      redis.call('HDEL', h, 'body')
      redis.call('HDEL', bodies, cbody(num))
      redis.call('HINCRBY', h, 'ver', 1)
      kept = true
    end
    if parent ~= '0' then redis.call('HINCRBY', key(i + 1, 0), 'held', 1) end
  else
    local by = cmeta(h).author
    redis.call('UNLINK', h, key(i, 2), key(i, 3), key(i, 4), key(i, 5))
    cvotes_drop(key(i, 1), key(i, 6), num)
    redis.call('HSET', h, 'author', by, 'gone', '1')
    redis.call('EXPIRE', h, ARGV[2])
    redis.call('SREM', ids, string.format('%d', tonumber(num)), num) -- either form (keys.go threadIDs)
    redis.call('HDEL', bodies, cbody(num))
  end
end
if kept then return {'tombstone', n} end
return {'removed', n}
