-- save_post: add a post to the user's saved posts, unless it is there already.
-- KEYS[1]  zset {u:<user>}:saved (post key → when saved, Unix ms)   KEYS[2] the user's hash {u:<user>}
-- ARGV[1]  the post key ("17")   ARGV[2] now (Unix ms)   ARGV[3] the most posts a user may save
-- Reply    1 when the post was added, 0 when it was saved already (its time is kept).
-- Errors   LIMIT (the saved set holds ARGV[3] posts and this one is not among them);
--          UNAUTHENTICATED, with nothing written, when the user's account is deleted (checks that
--          passed just before the deletion, whose step dropped KEYS[1]: a set made again would stay
--          for good).
-- Repeat   a second run finds the post saved and changes nothing.
-- Revision KEYS[#KEYS] is the revision counter of the keys' aggregate; every run raises it, so
--          that a cached response that read the aggregate is known to be stale (store/revisions.go).
if redis.call('HGET', KEYS[2], 'deleted') == '1' then
  return redis.error_reply('UNAUTHENTICATED this account was deleted')
end
redis.call('INCR', KEYS[#KEYS])
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 0 end
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then
  return redis.error_reply('LIMIT a user can save at most ' .. ARGV[3] .. ' posts; unsave some first')
end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
return 1
