-- vote_comment: record one user's vote on a comment, move its counters by the exact difference and
-- move it in its parent's TOP, BEST and CONTROVERSIAL reply orders, where the parent keeps them
-- (see reply_orders).
-- KEYS[1]  post hash {p:<id>}   KEYS[2] comment hash {p:<id>}:c:<number>   KEYS[3] the votes
--          bucket of the comment {p:<id>}:c:v<bucket> (see lib/comment_votes)   KEYS[4..6] the
--          parent's TOP, BEST and CONTROVERSIAL orders {p:<id>}:c:<parent>:rs, :rb and :rc
--          KEYS[7] the thread's bodies {p:<id>}:c:body (read only)   KEYS[8] the comment's votes
--          hash of layout 5 {p:<id>}:c:<number>:votes, moved into the bucket when it exists
-- ARGV[1]  parent number, as the caller read it (parents never change)   ARGV[2] comment number
-- ARGV[3]  voter user key   ARGV[4] direction 1 | -1 | 0 (withdraw)   ARGV[5] now (Unix ms)
-- Reply    {changed (0|1), HGETALL of the comment with its body...}; {"again"} when the comment's parent is not
--          ARGV[1] (it did not exist yet when the caller read it): read it again.
-- Errors   NOTFOUND (no post, no comment, or a deleted or removed one), LOCKED (a locked post),
--          FORBIDDEN (the author), CLOSED (after the voting window).
-- Writes   only KEYS (see create_comment for why).
-- Repeat   the voter record makes a second run a no-op (changed = 0).
-- Revision KEYS[#KEYS] is the revision counter of the keys' aggregate; every run raises it, so
--          that a cached response that read the aggregate is known to be stale (store/revisions.go).
--!include comment_scores
--!include comment_votes
--!include comment_meta
redis.call('INCR', KEYS[#KEYS])
local post, c = KEYS[1], KEYS[2]
if not redis.call('HGET', post, 'author') or redis.call('HGET', post, 'deleted') == '1' then
  return redis.error_reply('NOTFOUND no such post')
end
if redis.call('HGET', post, 'removed') == '1' then
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
if redis.call('HGET', c, 'removed') == '1' then
  return redis.error_reply('NOTFOUND no such comment')
end
if redis.call('HGET', post, 'locked') == '1' then
  return redis.error_reply('LOCKED a moderator locked the post: no new votes')
end
if meta.parent ~= ARGV[1] then return {'again'} end
if author == ARGV[3] then
  return redis.error_reply('FORBIDDEN authors cannot vote on their own comments')
end
if tonumber(ARGV[5]) >= tonumber(meta.closes) then
  return redis.error_reply('CLOSED voting on this comment has closed')
end
local votes, field = KEYS[3], cvotes_prefix(ARGV[2]) .. ARGV[3]
cvotes_adopt(votes, KEYS[8], ARGV[2])
local old = tonumber(redis.call('HGET', votes, field) or '0')
local new = tonumber(ARGV[4])
local changed = 0
if old ~= new then
  if old == 1 then redis.call('HINCRBY', c, 'up', -1) elseif old == -1 then redis.call('HINCRBY', c, 'down', -1) end
  if new == 1 then redis.call('HINCRBY', c, 'up', 1) elseif new == -1 then redis.call('HINCRBY', c, 'down', 1) end
  if new == 0 then redis.call('HDEL', votes, field) else redis.call('HSET', votes, field, new) end
  redis.call('HINCRBY', c, 'ver', 1)
  -- Only a marked parent keeps these orders (see reply_orders); a live reply of one is in them,
  -- so they exist.
  if redis.call('EXISTS', KEYS[4]) == 1 then
    local net, best, con = commentScores(c)
    redis.call('ZADD', KEYS[4], net, ARGV[2])
    redis.call('ZADD', KEYS[5], best, ARGV[2])
    redis.call('ZADD', KEYS[6], con, ARGV[2])
  end
  changed = 1
end
local reply = redis.call('HGETALL', c)
local body = redis.call('HGET', KEYS[7], ARGV[2])
if body and redis.call('HEXISTS', c, 'body') == 0 then reply[#reply + 1] = 'body'; reply[#reply + 1] = body end
table.insert(reply, 1, changed)
return reply
