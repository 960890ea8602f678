-- edit_comment: replace the body of a comment and record when.
-- KEYS[1]  post hash {p:<id>}   KEYS[2] comment hash {p:<id>}:c:<number>   KEYS[3] the thread's
--          bodies {p:<id>}:c:body
-- ARGV[1]  the editing user key   ARGV[2] new body   ARGV[3] now (Unix ms)   ARGV[4] the number
-- Reply    HGETALL of the comment, with its body as the field body.
-- Errors   NOTFOUND (no post, a deleted or removed one, no comment, or a deleted one), FORBIDDEN
--          (not the author).
-- Repeat   a second run finds the body already set and changes nothing; so does an edit that
--          does not change the text (editedAt stays as it was).
-- Revision KEYS[#KEYS] is the revision counter of the keys' aggregate; every run raises it, so
--          that a cached response that read the aggregate is known to be stale (store/revisions.go).
--!include comment_meta
redis.call('INCR', KEYS[#KEYS])
local post, c = KEYS[1], KEYS[2]
if not redis.call('HGET', post, 'author') or redis.call('HGET', post, 'deleted') == '1' then
  return redis.error_reply('NOTFOUND no such post')
end
if redis.call('HGET', post, 'removed') == '1' then
  -- Its commenters no longer see the post, which the edited comment would show them.
  return redis.error_reply('NOTFOUND no such post')
end
local meta = cmeta(c)
local author = meta.author
if not author or not meta.created then
  return redis.error_reply('NOTFOUND no such comment')
end
if redis.call('HGET', c, 'deleted') == '1' then
  return redis.error_reply('NOTFOUND the comment was deleted')
end
if author ~= ARGV[1] then
  return redis.error_reply('FORBIDDEN only the author can edit a comment')
end
-- Before layout 3 the body was a field of the comment's hash, and a binary of layout 2 still writes
-- it there during an upgrade: a body in the hash is the newer one. An edit moves it.
local inHash = redis.call('HGET', c, 'body')
local old = inHash or redis.call('HGET', KEYS[3], cbody(ARGV[4]))
if old ~= ARGV[2] then redis.call('HSET', c, 'edited', ARGV[3]) end
if old ~= ARGV[2] or inHash then redis.call('HSET', KEYS[3], cbody(ARGV[4]), ARGV[2]) end
if inHash then redis.call('HDEL', c, 'body') end
local all = redis.call('HGETALL', c)
all[#all + 1] = 'body'
all[#all + 1] = ARGV[2]
return all
