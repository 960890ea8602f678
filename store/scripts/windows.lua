-- windows: put a post into (or take it out of) the windowed TOP sets of one set of rankings, and
-- trim from each set a bounded number of the posts its window has passed. The scores are
-- absolute (net votes); a post is in a window's set only while it was published within the
-- window at the write's time. Reads filter exactly at their own time what trimming has not yet
-- taken out (page.lua): the posts published in [mark, cutoff) of each set.
-- KEYS[1]  version hash (post id → last applied version; index.lua, sent just before, records it)
-- KEYS[2]  the rankings' publish-time set (:new)   KEYS[3] trim marks hash (window set → ms:
--          every post published before it is out of that set)   KEYS[4..#KEYS-1] window sets
-- Backlog  a burst of posts followed by a quiet time leaves many past posts that no write trims,
--          and every read filters each of them. A read that filters more than trimBacklogAt
--          (store/windows_trim.go) queues a job, one per rankings ("trim:<group>"), that runs this
--          script in its "trim" mode, a bounded trim per call, until none are left.
-- ARGV[1]  post id   ARGV[2] version   ARGV[3] "add" | "rem" | "trim" (no post: ARGV[1], ARGV[2],
--          ARGV[4] and ARGV[5] are not read; the reply says whether a set had more to trim)
-- ARGV[4]  net votes
-- ARGV[5]  publish time (ms)   ARGV[6] at most how many posts to trim per set
-- ARGV[7..] per window set, its cutoff (ms): now minus its length; a post published before it
--          is past the window
-- Reply    1 when the post's entries were applied, 0 when a newer version was recorded (the
--          trimming runs either way). In "trim" mode: 1 when a set trimmed as many as ARGV[6]
--          allows (more may be left), 0 when every set is trimmed up to its cutoff.
-- Guard    the entries apply only when the version hash holds exactly ARGV[2]: index.lua, sent
--          just before in the same rankings' calls, has recorded it, and no newer write has come
--          since. A guard recorded after this script (the order before) let an older write that
--          interleaved with a newer one put its net votes back.
-- Repeat   a second run finds the same state: trimming only removes past posts and the marks only
--          move forward; the entries are absolute, and one version's are always the same.
-- Revision KEYS[#KEYS] is the revision counter of the keys' aggregate; every run raises it, so
--          that a cached response that read the aggregate is known to be stale (store/revisions.go).
redis.call('INCR', KEYS[#KEYS])
local trimOnly = ARGV[3] == 'trim'
local apply = false
if not trimOnly then
  apply = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '-1') == tonumber(ARGV[2])
end
local limit, at, more = tonumber(ARGV[6]), tonumber(ARGV[5]), false
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
      more = true
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
if trimOnly then
  if more then return 1 end
  return 0
end
if apply then return 1 end
return 0
