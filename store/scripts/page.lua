-- page: one page of a sorted set between cursors (score, member), forwards or backwards, stable
-- while members come and go.
-- Pages without a cursor do not use it: the first page (ZRANGE from the start) and the last page
-- (ZRANGE from the end) are plain commands, which cost Redis far less than a script call. A page
-- after or before a cursor uses it because finding the cursor's place among ties takes several
-- dependent commands, which here cost one round trip.
-- KEYS[1]  sorted set
-- ARGV[1]  "desc" | "asc"   ARGV[2] how many to return
-- ARGV[3]  "first": the first ARGV[2] members after the after cursor | "last": the last ARGV[2]
--          members before the before cursor; both cursors bound the page in either direction
-- ARGV[4]  after cursor score ("" for the start of the list)   ARGV[5] after cursor member
-- ARGV[6]  before cursor score ("" for the end of the list)   ARGV[7] before cursor member
-- ARGV[8]  optional, "asc" only: a floor score; the members scored at or below it are not part of
--          the list (per-member expiry: ended bans, say): they are neither returned nor counted
-- ARGV[9]  optional, "desc" only: a cutoff (ms); with KEYS[2] a publish-time set and KEYS[3] a trim
--          marks hash whose field ARGV[10] holds the set's mark, the members KEYS[2] scores in
--          [mark, cutoff) are not part of the list (a windowed TOP's posts past its window that
--          no write has trimmed yet; see windows.lua): they are neither returned nor counted
-- Reply    {total, start, member1, score1, member2, score2, ...}; start is the 0-based position of
--          the first member returned (of where it would be, for an empty page), so members
--          precede the page when start > 0 and follow it when start + its length < total.
--          With ARGV[9], {total, start, backlog, member1, score1, ...}: backlog is how many
--          members KEYS[2] scores in [mark, cutoff), the filter's cost, which tells the reader
--          to have them trimmed (store/windows_trim.go).
-- Order is Redis's: by score, ties by member bytes (reversed for "desc"). A cursor's place is
-- found the same way for both directions: when its member is still present with the same score,
-- its rank; otherwise the count of the members ordered before the cursor's score plus a binary
-- search of its ties. A cursor of a member present bounds the page without being in it.
-- Read-only.
local key, desc, limit, last = KEYS[1], ARGV[1] == 'desc', tonumber(ARGV[2]), ARGV[3] == 'last'

--!include page_window

-- place returns how many members are ordered before the cursor (score sc, member cm), and
-- whether the cursor's member is still there with that score (it is then at that position).
local function place(sc, cm)
  local s = redis.call('ZSCORE', key, cm)
  if s and tonumber(s) == tonumber(sc) then
    if desc then return redis.call('ZREVRANK', key, cm), true end
    return redis.call('ZRANK', key, cm), true
  end
  local lo
  if desc then
    lo = redis.call('ZCOUNT', key, '(' .. sc, '+inf')
  else
    lo = redis.call('ZCOUNT', key, '-inf', '(' .. sc)
  end
  local hi = lo + redis.call('ZCOUNT', key, sc, sc)
  while lo < hi do
    local mid = math.floor((lo + hi) / 2)
    local m
    if desc then m = redis.call('ZREVRANGE', key, mid, mid)[1] else m = redis.call('ZRANGE', key, mid, mid)[1] end
    local follows
    if desc then follows = before(m, cm) else follows = before(cm, m) end
    if follows then hi = mid else lo = mid + 1 end
  end
  return lo, false
end

local total = redis.call('ZCARD', key)
local floor = 0
if not desc and ARGV[8] and ARGV[8] ~= '' then
  floor = redis.call('ZCOUNT', key, '-inf', ARGV[8])
end
-- The members past a window, and their positions in the set, ascending.
local gone, ranks = {}, {}
local cut, backlog = desc and ARGV[9] and ARGV[9] ~= '', 0
if cut then
  local mark = redis.call('HGET', KEYS[3], ARGV[10])
  if mark and tonumber(mark) < tonumber(ARGV[9]) then
    local past = redis.call('ZRANGEBYSCORE', KEYS[2], mark, '(' .. ARGV[9])
    backlog = #past
    for _, m in ipairs(past) do
      local r = redis.call('ZREVRANK', key, m)
      if r then
        gone[m] = true
        ranks[#ranks + 1] = r
      end
    end
    table.sort(ranks)
  end
end
-- shown maps a position in the set to one in the list; stored maps back.
local function shown(p)
  local n = 0
  for _, r in ipairs(ranks) do
    if r < p then n = n + 1 else break end
  end
  return p - n
end
local function stored(p)
  for _, r in ipairs(ranks) do
    if r <= p then p = p + 1 else break end
  end
  return p
end
-- The window is the positions [lo, hi): after the after cursor and before the before cursor.
local lo, hi = floor, total
if ARGV[4] ~= '' then
  local at, present = place(ARGV[4], ARGV[5])
  if present then lo = math.max(at + 1, floor) else lo = math.max(at, floor) end
end
if ARGV[6] ~= '' then
  hi = place(ARGV[6], ARGV[7])
end
lo, hi, total = shown(lo), shown(hi), total - #ranks
local start, stop = page_span(lo, hi, limit, last)
local reply = {total - floor, start - floor}
if cut then reply[3] = backlog end
if stop > start then
  local items
  local from = stored(start)
  if desc then
    items = redis.call('ZREVRANGE', key, from, from + stop - start + #ranks - 1, 'WITHSCORES')
  else
    items = redis.call('ZRANGE', key, from, from + stop - start - 1, 'WITHSCORES')
  end
  local n = 0
  for i = 1, #items, 2 do
    if n < stop - start and not gone[items[i]] then
      reply[#reply + 1] = items[i]
      reply[#reply + 1] = items[i + 1]
      n = n + 1
    end
  end
end
return reply
