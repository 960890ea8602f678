-- comment_scores: a comment's scores in its parent's TOP, BEST and CONTROVERSIAL reply orders,
-- from its hash's up and down, absolute (the same votes always give the same scores). Scripts
-- that write these orders include it ("--!include comment_scores", see store/scripts.go), so the
-- formulas are written once in Lua; CONTROVERSIAL is store.Controversy, the posts' formula.
-- BEST is the lower bound of the Wilson score interval of the share of upvotes at 95 %
-- confidence (z = 1.96), Reddit's "best": 0 without upvotes. CONTROVERSIAL is
-- (up + down) ^ (min(up, down) / max(up, down)), 0 when either is 0.
-- The scores go to ZADD as text with 17 significant digits: Redis's own conversion of a Lua
-- number keeps 14, which would tie comments that differ.
local function commentScores(h)
  local up = tonumber(redis.call('HGET', h, 'up') or '0')
  local down = tonumber(redis.call('HGET', h, 'down') or '0')
  local best, con = 0, 0
  if up > 0 then
    local n, z = up + down, 1.96
    local p = up / n
    best = (p + z * z / (2 * n) - z * math.sqrt((p * (1 - p) + z * z / (4 * n)) / n)) / (1 + z * z / n)
  end
  if up > 0 and down > 0 then
    con = (up + down) ^ (math.min(up, down) / math.max(up, down))
  end
  return up - down, string.format('%.17g', best), string.format('%.17g', con)
end
