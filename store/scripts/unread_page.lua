-- unread_page: one page of a user's unread notifications, newest first, between cursors: the page
-- page.lua would give of a sorted set of the unread ids scored by creation time (layout 6's
-- {n:<user>}:unread), so that the list's pages and cursors are the same (see lib/inbox_unread.lua).
-- It walks the whole inbox — at most NotificationCap ids, with their records — and keeps the
-- unread ones; an inbox still of layout 6 is paged from its sorted set of unread ids.
-- KEYS[1]  hash {n:<user>}:notes   KEYS[2] zset {n:<user>}:inbox (id → created ms)
--          KEYS[3] zset {n:<user>}:unread, of an inbox of layout 6
-- ARGV[1]  how many to return   ARGV[2] "first": the first ARGV[1] after the after cursor |
--          "last": the last ARGV[1] before the before cursor; both cursors bound the page
-- ARGV[3]  after cursor score ("" for the start of the list)   ARGV[4] after cursor member
-- ARGV[5]  before cursor score ("" for the end of the list)   ARGV[6] before cursor member
-- Reply    page.lua's: {total, start, member1, score1, ...}
-- Order is ZREVRANGE's: newest first, ties by member bytes reversed. A cursor's place is the
-- number of unread ids ordered before it; one of an id still unread with that score bounds the
-- page without being in it.
-- Read-only.
--!include inbox_unread
local notes, inbox, legacy = KEYS[1], KEYS[2], KEYS[3]
local limit, last = tonumber(ARGV[1]), ARGV[2] == 'last'
local list = {} -- member, score, member, score, … newest first
if legacy_inbox(notes, legacy) then
  list = redis.call('ZREVRANGE', legacy, 0, -1, 'WITHSCORES')
else
  local all = redis.call('ZREVRANGE', inbox, 0, -1, 'WITHSCORES')
  if #all > 0 then
    local ids = {}
    for i = 1, #all, 2 do ids[#ids + 1] = all[i] end
    local recs = redis.call('HMGET', notes, unpack(ids))
    for i, rec in ipairs(recs) do
      if is_unread(rec) then
        list[#list + 1] = all[2 * i - 1]
        list[#list + 1] = all[2 * i]
      end
    end
  end
end
local total = #list / 2

--!include page_window

-- place returns how many unread ids are ordered before the cursor (score sc, member cm), and
-- whether the cursor's member is one of them, with that score (it is then at that position).
local function place(sc, cm)
  local s = tonumber(sc)
  for i = 1, #list, 2 do
    local ms = tonumber(list[i + 1])
    if list[i] == cm and ms == s then return (i - 1) / 2, true end
    if ms < s or (ms == s and before(list[i], cm)) then return (i - 1) / 2, false end
  end
  return total, false
end

local lo, hi = 0, total
if ARGV[3] ~= '' then
  local at, present = place(ARGV[3], ARGV[4])
  if present then lo = at + 1 else lo = at end
end
if ARGV[5] ~= '' then
  hi = place(ARGV[5], ARGV[6])
end
local start, stop = page_span(lo, hi, limit, last)
local reply = {total, start}
for p = start, stop - 1 do
  reply[#reply + 1] = list[2 * p + 1]
  reply[#reply + 1] = list[2 * p + 2]
end
return reply
