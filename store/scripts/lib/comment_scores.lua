-- comment_scores: a comment's scores in its parent's TOP, BEST and CONTROVERSIAL reply orders,
-- from its hash's up and down, absolute (the same votes always give the same scores). Scripts
-- that write these orders include it ("--!include comment_scores", see store/scripts.go), so the
-- formulas are written once in Lua; CONTROVERSIAL is store.Controversy, the posts' formula.
-- BEST is the lower bound of the Wilson score interval of the share of upvotes at 95 %
-- confidence (z = 1.96), Reddit's "best": 0 without upvotes. CONTROVERSIAL is
-- (up + down) ^ (min(up, down) / max(up, down)), 0 when either is 0.
-- The scores go to ZADD as text with 17 significant digits: Redis's own conversion of a Lua
-- number keeps 14, which would tie comments that differ.
-- The power of CONTROVERSIAL is computed with + - * / alone (replyPow), not with ^: the reader
-- ranks the replies of a parent that keeps no orders in Go (store/comment_orders.go
-- replyScore), and only these operations give the same float64 in Lua and in Go — C's pow and
-- Go's math.Pow differ in the last bit for some votes, which would change a reply's cursor when
-- its parent starts keeping its orders. It is within a few units in the last place of pow.

-- replyLn2 is the float64 nearest ln 2.
local replyLn2 = 0.6931471805599453

-- replyPow returns n ^ x for an integer n >= 1 and 0 <= x <= 1: exp(x * ln n), ln n from
-- n = m * 2^e (m in [1, 2)) and the series of atanh, exp from 2^k * exp(r) (r in [0, ln 2)) and
-- Taylor's series, each with a fixed number of terms, in the order store.replyPow takes them.
local function replyPow(n, x)
  local m, e = n, 0
  while m >= 2 do m = m / 2; e = e + 1 end
  local s = (m - 1) / (m + 1)
  local s2, term, sum = s * s, s, 0
  for k = 0, 19 do
    sum = sum + term / (2 * k + 1)
    term = term * s2
  end
  local y = x * (e * replyLn2 + 2 * sum)
  local k = math.floor(y / replyLn2)
  local r = y - k * replyLn2
  local t, ex = 1, 1
  for i = 1, 20 do
    t = t * r / i
    ex = ex + t
  end
  for _ = 1, k do ex = ex * 2 end
  return ex
end

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
    con = replyPow(up + down, math.min(up, down) / math.max(up, down))
  end
  return up - down, string.format('%.17g', best), string.format('%.17g', con)
end
