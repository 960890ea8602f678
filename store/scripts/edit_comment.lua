-- edit_comment: replace the body of a comment and record when.
-- KEYS[1]  post hash {p:<id>}   KEYS[2] comment hash {p:<id>}:c:<number>
-- ARGV[1]  the editing user key   ARGV[2] new body   ARGV[3] now (Unix ms)
-- Reply    HGETALL of the comment.
-- Errors   NOTFOUND (no post, a deleted or removed one, no comment, or a deleted one), FORBIDDEN
--          (not the author).
-- Repeat   a second run finds the body already set and changes nothing; so does an edit that
--          does not change the text (editedAt stays as it was).
-- Revision KEYS[#KEYS] is the revision counter of the keys' aggregate; every run raises it, so
--          that a cached response that read the aggregate is known to be stale (store/revisions.go).
redis.call('INCR', KEYS[#KEYS])
local post, c = KEYS[1], KEYS[2]
if not redis.call('HGET', post, 'author') or redis.call('HGET', post, 'deleted') == '1' then
  return redis.error_reply('NOTFOUND no such post')
end
if redis.call('HGET', post, 'removed') == '1' then
  -- Its commenters no longer see the post, which the edited comment would show them.
  return redis.error_reply('NOTFOUND no such post')
end
local author = redis.call('HGET', c, 'author')
if not author or redis.call('HEXISTS', c, 'created') == 0 then
  return redis.error_reply('NOTFOUND no such comment')
end
if redis.call('HGET', c, 'deleted') == '1' then
  return redis.error_reply('NOTFOUND the comment was deleted')
end
if author ~= ARGV[1] then
  return redis.error_reply('FORBIDDEN only the author can edit a comment')
end
if redis.call('HGET', c, 'body') ~= ARGV[2] then
  redis.call('HSET', c, 'body', ARGV[2], 'edited', ARGV[3])
end
return redis.call('HGETALL', c)
