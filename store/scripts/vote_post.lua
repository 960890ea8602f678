-- vote_post: record one user's vote on a post and move the counters by the exact difference.
-- KEYS[1]  post hash {p:<id>}      KEYS[2] votes hash {p:<id>}:votes (voter → 1 | -1)
-- ARGV[1]  voter user key   ARGV[2] direction 1 | -1 | 0 (withdraw)   ARGV[3] now (Unix ms)
-- KEYS[#KEYS - 1] the thread's bodies {p:<id>}:c:body, for the post's texts kept apart (read only;
--          see lib/post_texts.lua)
-- Reply    {changed (0|1), HGETALL of the post...}
-- Errors   NOTFOUND (no post, deleted, or removed), LOCKED (a locked post), FORBIDDEN (the author),
--          CLOSED (after the window).
-- Repeat   the voter record makes a second run a no-op (changed = 0).
-- Revision KEYS[#KEYS] is the revision counter of the keys' aggregate; every run raises it, so
--          that a cached response that read the aggregate is known to be stale (store/revisions.go).
--!include post_texts
redis.call('INCR', KEYS[#KEYS])
local p = KEYS[1]
local author = redis.call('HGET', p, 'author')
if not author or redis.call('HGET', p, 'deleted') == '1' then
  return redis.error_reply('NOTFOUND no such post')
end
if redis.call('HGET', p, 'removed') == '1' and author ~= ARGV[1] then
  return redis.error_reply('NOTFOUND no such post')
end
if redis.call('HGET', p, 'locked') == '1' then
  return redis.error_reply('LOCKED a moderator locked the post: no new votes')
end
if author == ARGV[1] then
  return redis.error_reply('FORBIDDEN authors cannot vote on their own posts')
end
if tonumber(ARGV[3]) >= tonumber(redis.call('HGET', p, 'closes')) then
  return redis.error_reply('CLOSED voting on this post has closed')
end
local old = tonumber(redis.call('HGET', KEYS[2], ARGV[1]) or '0')
local new = tonumber(ARGV[2])
local changed = 0
if old ~= new then
  if old == 1 then redis.call('HINCRBY', p, 'up', -1) elseif old == -1 then redis.call('HINCRBY', p, 'down', -1) end
  if new == 1 then redis.call('HINCRBY', p, 'up', 1) elseif new == -1 then redis.call('HINCRBY', p, 'down', 1) end
  if new == 0 then redis.call('HDEL', KEYS[2], ARGV[1]) else redis.call('HSET', KEYS[2], ARGV[1], new) end
  redis.call('HINCRBY', p, 'ver', 1)
  changed = 1
end
local reply = post_reply(p, KEYS[#KEYS - 1])
table.insert(reply, 1, changed)
return reply
