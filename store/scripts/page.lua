-- page: one page of a sorted set after a cursor (score, member), stable while members come and go.
-- First pages do not use it: they are plain ZCARD and ZRANGE commands, which cost Redis far less
-- than a script call. A page after a cursor uses it because finding the cursor's place among ties
-- takes several dependent commands, which here cost one round trip.
-- KEYS[1]  sorted set
-- ARGV[1]  "desc" | "asc"   ARGV[2] how many to return   ARGV[3] cursor score ("" for the first
--          page)   ARGV[4] cursor member
-- Reply    {total, start, member1, score1, member2, score2, ...}; start is the 0-based position of
--          the first member returned.
-- Order is Redis's: by score, ties by member bytes (reversed for "desc"). When the cursor's member
-- is still present with the same score its rank is the position; otherwise the position is found
-- by counting the members ordered before the cursor's score and binary-searching its ties.
-- Read-only.
local key, desc, limit = KEYS[1], ARGV[1] == 'desc', tonumber(ARGV[2])

-- bytes compares like memcmp, which Redis uses for ties; Lua's < follows the locale.
local function before(a, b)
  local n = math.min(#a, #b)
  for i = 1, n do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then return x < y end
  end
  return #a < #b
end

local total = redis.call('ZCARD', key)
local start = 0
if ARGV[3] ~= '' then
  local cs, cm = tonumber(ARGV[3]), ARGV[4]
  local s = redis.call('ZSCORE', key, cm)
  if s and tonumber(s) == cs then
    if desc then start = redis.call('ZREVRANK', key, cm) + 1 else start = redis.call('ZRANK', key, cm) + 1 end
  else
    local lo, ties
    if desc then
      lo = redis.call('ZCOUNT', key, '(' .. ARGV[3], '+inf')
    else
      lo = redis.call('ZCOUNT', key, '-inf', '(' .. ARGV[3])
    end
    ties = redis.call('ZCOUNT', key, ARGV[3], ARGV[3])
    local hi = lo + ties
    while lo < hi do
      local mid = math.floor((lo + hi) / 2)
      local m
      if desc then m = redis.call('ZREVRANGE', key, mid, mid)[1] else m = redis.call('ZRANGE', key, mid, mid)[1] end
      local after
      if desc then after = before(m, cm) else after = before(cm, m) end
      if after then hi = mid else lo = mid + 1 end
    end
    start = lo
  end
end
local items
if desc then
  items = redis.call('ZREVRANGE', key, start, start + limit - 1, 'WITHSCORES')
else
  items = redis.call('ZRANGE', key, start, start + limit - 1, 'WITHSCORES')
end
local reply = {total, start}
for i = 1, #items do reply[#reply + 1] = items[i] end
return reply
