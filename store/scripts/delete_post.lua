-- delete_post: replace a post by a short-lived tombstone and drop its votes and thread.
-- KEYS[1]  post hash {p:<id>}   KEYS[2..#KEYS-2] the post's other keys (votes, thread), all
--          {p:<id>}, which go   KEYS[#KEYS - 1] the thread's bodies {p:<id>}:c:body, which loses the
--          post's texts kept apart (lib/post_texts.lua) and keeps the comments' (swept later)
-- ARGV[1]  the deleting user key   ARGV[2] tombstone TTL in seconds
-- Reply    HGETALL of the tombstone: author, created, groups, ver, nonce, deleted = "1". (The nonce
--          keeps answering repeats of the post's creation; see create_post.)
-- Errors   NOTFOUND (no post, or a deleted one and not its author), FORBIDDEN (not the author).
-- Repeat   a second run finds the tombstone and replies with it unchanged.
-- Revision KEYS[#KEYS] is the revision counter of the keys' aggregate; every run raises it, so
--          that a cached response that read the aggregate is known to be stale (store/revisions.go).
--!include post_texts
redis.call('INCR', KEYS[#KEYS])
local p = KEYS[1]
local author = redis.call('HGET', p, 'author')
if not author then return redis.error_reply('NOTFOUND no such post') end
if author ~= ARGV[1] then
  -- A deleted post names nothing for anyone but its author, whose repeat must succeed.
  if redis.call('HGET', p, 'deleted') == '1' then return redis.error_reply('NOTFOUND no such post') end
  return redis.error_reply('FORBIDDEN only the author can delete a post')
end
if redis.call('HGET', p, 'deleted') ~= '1' then
  local created = redis.call('HGET', p, 'created')
  local groups = redis.call('HGET', p, 'groups')
  local ver = redis.call('HINCRBY', p, 'ver', 1)
  local nonce = redis.call('HGET', p, 'nonce')
  for i = 1, #KEYS - 2 do redis.call('UNLINK', KEYS[i]) end
  drop_post_texts(KEYS[#KEYS - 1])
  redis.call('HSET', p, 'author', author, 'created', created, 'groups', groups, 'ver', ver, 'deleted', '1')
  if nonce then redis.call('HSET', p, 'nonce', nonce) end
  redis.call('EXPIRE', p, ARGV[2])
end
return redis.call('HGETALL', p)
