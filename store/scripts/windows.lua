-- windows: put a post into (or take it out of) the windowed TOP sets of one set of rankings, and
-- trim from each set a bounded number of the posts its window has passed. The scores are
-- absolute (net votes); a post is in a window's set only while it was published within the
-- window at the write's time. Reads filter exactly at their own time what trimming has not yet
-- taken out (page.lua): the posts published in [mark, cutoff) of each set.
-- KEYS[1]  version hash (post id → last applied version; index.lua, sent just before, records it)
-- KEYS[2]  the rankings' publish-time set (:new)   KEYS[3] trim marks hash (window set → ms:
--          every post published before it is out of that set)   KEYS[4..#KEYS-1] window sets
-- ARGV[1]  post id   ARGV[2] version   ARGV[3] "add" | "rem"   ARGV[4] net votes
-- ARGV[5]  publish time (ms)   ARGV[6] at most how many posts to trim per set
-- ARGV[7..] per window set, its cutoff (ms): now minus its length; a post published before it
--          is past the window
-- Reply    1 when the post's entries were applied, 0 when a newer version was recorded (the
--          trimming runs either way).
-- Guard    the entries apply only when the version hash holds exactly ARGV[2]: index.lua, sent
--          just before in the same rankings' calls, has recorded it, and no newer write has come
--          since. A guard recorded after this script (the order before) let an older write that
--          interleaved with a newer one put its net votes back.
-- Repeat   a second run finds the same state: trimming only removes past posts and the marks only
--          move forward; the entries are absolute, and one version's are always the same.
-- Revision KEYS[#KEYS] is the revision counter of the keys' aggregate; every run raises it, so
--          that a cached response that read the aggregate is known to be stale (store/revisions.go).
redis.call('INCR', KEYS[#KEYS])
local cur = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '-1')
local apply = cur == tonumber(ARGV[2])
local limit, at = tonumber(ARGV[6]), tonumber(ARGV[5])
for i = 4, #KEYS - 1 do
  local set, cutoff = KEYS[i], tonumber(ARGV[i + 3])
  local mark = tonumber(redis.call('HGET', KEYS[3], set) or '')
  if not mark then
    -- A new set holds no post from before its cutoff: nothing to trim.
    mark = cutoff
    redis.call('HSET', KEYS[3], set, mark)
  elseif mark < cutoff then
    local old = redis.call('ZRANGEBYSCORE', KEYS[2], mark, '(' .. cutoff, 'WITHSCORES', 'LIMIT', 0, limit)
    for j = 1, #old, 2 do redis.call('ZREM', set, old[j]) end
    local to = cutoff
    if #old == 2 * limit then
      -- More remain: trim the rest of the last one's millisecond, and stop after it.
      local last = tonumber(old[#old])
      for _, m in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], last, last)) do redis.call('ZREM', set, m) end
      to = last + 1
    end
    mark = to
    redis.call('HSET', KEYS[3], set, mark)
  end
  if apply then
    -- A post published before the mark would escape the reads' filter: it is past the window.
    if ARGV[3] == 'add' and at >= cutoff and at >= mark then
      redis.call('ZADD', set, ARGV[4], ARGV[1])
    else
      redis.call('ZREM', set, ARGV[1])
    end
  end
end
if apply then return 1 end
return 0
