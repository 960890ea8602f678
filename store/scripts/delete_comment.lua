-- delete_comment: delete a comment. One with replies in the tree becomes a tombstone (deleted, its
-- body dropped, its replies kept); one without is removed for good, and so is every tombstoned
-- ancestor that this leaves without replies, so no tombstone is ever left childless.
-- KEYS[1]  post hash {p:<id>}   KEYS[2] comment hash {p:<id>}:c:<number>   KEYS[3] thread ids set
-- ARGV[1]  thread key prefix {p:<id>}:c:   ARGV[2] comment number   ARGV[3] the deleting user key
-- ARGV[4]  TTL in seconds of the marker a removed comment leaves behind
-- Reply    {"tombstone" | "removed", how many comments left the tree}
-- Errors   NOTFOUND (no post, no comment), FORBIDDEN (not the author).
-- Writes   besides KEYS: the parents, reply indexes and votes of the removed comments, derived
--          from ARGV[1] in the post's slot; the post's comments (live count).
-- Repeat   a second run finds the tombstone, or the removal marker, and replies as the first did
--          with a count of 0.
local post, c, prefix = KEYS[1], KEYS[2], ARGV[1]
if not redis.call('HGET', post, 'author') or redis.call('HGET', post, 'deleted') == '1' then
  return redis.error_reply('NOTFOUND no such post')
end
local author = redis.call('HGET', c, 'author')
if not author then return redis.error_reply('NOTFOUND no such comment') end
local gone = redis.call('HEXISTS', c, 'created') == 0
if author ~= ARGV[3] then
  if gone then return redis.error_reply('NOTFOUND no such comment') end
  return redis.error_reply('FORBIDDEN only the author can delete a comment')
end
if gone then return {'removed', 0} end
if redis.call('HGET', c, 'deleted') == '1' then return {'tombstone', 0} end
redis.call('HINCRBY', post, 'comments', -1)
if tonumber(redis.call('HGET', c, 'replies')) > 0 then
  redis.call('HSET', c, 'deleted', '1')
  redis.call('HDEL', c, 'body')
  redis.call('HINCRBY', c, 'ver', 1)
  return {'tombstone', 0}
end
local num, removed = ARGV[2], 0
while true do
  local key = prefix .. num
  local parent = redis.call('HGET', key, 'parent')
  local by = redis.call('HGET', key, 'author')
  redis.call('ZREM', prefix .. parent .. ':rt', num)
  redis.call('ZREM', prefix .. parent .. ':rs', num)
  redis.call('UNLINK', key, key .. ':votes', key .. ':rt', key .. ':rs')
  redis.call('HSET', key, 'author', by, 'gone', '1')
  redis.call('EXPIRE', key, ARGV[4])
  redis.call('SREM', KEYS[3], num)
  removed = removed + 1
  if parent == '0' then break end
  local left = redis.call('HINCRBY', prefix .. parent, 'replies', -1)
  if left > 0 or redis.call('HGET', prefix .. parent, 'deleted') ~= '1' then break end
  num = parent
end
return {'removed', removed}
