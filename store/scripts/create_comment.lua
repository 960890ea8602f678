-- create_comment: add a comment to a post's thread, or return the one an idempotency key made.
-- KEYS[1]  post hash {p:<id>}   KEYS[2] thread ids set {p:<id>}:c:ids   KEYS[3] idempotency
--          string {p:<id>}:c:idem:<digest>
-- ARGV[1]  thread key prefix {p:<id>}:c:   ARGV[2] parent number ("0" for a top-level comment)
-- ARGV[3]  author user key   ARGV[4] body   ARGV[5] now (Unix ms)   ARGV[6] voting closes (ms)
-- ARGV[7]  deepest depth allowed   ARGV[8] idempotency TTL in seconds
-- Reply    {number, HGETALL of the comment}
-- Errors   NOTFOUND (no post, deleted post, no parent, or the key's comment was removed since),
--          INVALID (the reply would nest too deep).
-- Writes   the comment hash {p:<id>}:c:<number>; the parent's two reply indexes (derived from
--          ARGV[1], all in the post's slot); the parent's replies; the post's comments (live
--          comments) and cseq (the comment number counter); the ids set; the idempotency key.
-- Repeat   the idempotency key makes a second run return the first comment unchanged.
local post, prefix, parent = KEYS[1], ARGV[1], ARGV[2]
if not redis.call('HGET', post, 'author') or redis.call('HGET', post, 'deleted') == '1' then
  return redis.error_reply('NOTFOUND no such post')
end
local done = redis.call('GET', KEYS[3])
if done then
  local h = redis.call('HGETALL', prefix .. done)
  if redis.call('HEXISTS', prefix .. done, 'created') == 0 then
    return redis.error_reply('NOTFOUND the comment made with this idempotency key was deleted')
  end
  return {done, h}
end
local depth = 0
if parent ~= '0' then
  local pd = redis.call('HGET', prefix .. parent, 'depth')
  if not pd then return redis.error_reply('NOTFOUND no such parent comment') end
  depth = tonumber(pd) + 1
  if depth > tonumber(ARGV[7]) then
    return redis.error_reply('INVALID replies nest at most ' .. ARGV[7] .. ' levels below a top-level comment')
  end
end
local num = string.format('%012d', redis.call('HINCRBY', post, 'cseq', 1))
local key = prefix .. num
redis.call('HSET', key, 'parent', parent, 'author', ARGV[3], 'body', ARGV[4], 'created', ARGV[5],
  'closes', ARGV[6], 'depth', depth, 'up', 0, 'down', 0, 'replies', 0, 'ver', 1)
redis.call('ZADD', prefix .. parent .. ':rt', ARGV[5], num)
redis.call('ZADD', prefix .. parent .. ':rs', 0, num)
if parent ~= '0' then redis.call('HINCRBY', prefix .. parent, 'replies', 1) end
redis.call('HINCRBY', post, 'comments', 1)
redis.call('SADD', KEYS[2], num)
redis.call('SET', KEYS[3], num, 'EX', ARGV[8])
return {num, redis.call('HGETALL', key)}
