-- replay: the events of a channel's log after a cursor, for a subscriber that resumes.
-- KEYS[1]  stream <channel>:log (see publish.lua)
-- ARGV[1]  the cursor: the id of the last event the subscriber has; "0-0" for every event of a
--          log that still has its birth mark or is still empty (a subscriber that found the log
--          empty)
-- ARGV[2]  most events to return
-- Reply    {"ok", id1, event1, id2, event2, ...}: the events after the cursor, oldest first, at
--          most ARGV[2] (ask again after the last id for more); or {"resync"} when events after
--          the cursor may be gone: the log has expired, or was trimmed past the cursor (its
--          first entry, the birth mark or the oldest event kept, is newer than the cursor), or
--          the cursor is newer than the log's last event (a log that lost events in a failover).
-- Read-only.
local after = ARGV[1]
local function lt(a, b) -- a < b for stream ids
  local am, as = string.match(a, '^(%d+)-(%d+)$')
  local bm, bs = string.match(b, '^(%d+)-(%d+)$')
  am, as, bm, bs = tonumber(am), tonumber(as), tonumber(bm), tonumber(bs)
  return am < bm or (am == bm and as < bs)
end
local first = redis.call('XRANGE', KEYS[1], '-', '+', 'COUNT', 1)[1]
if not first then
  if after == '0-0' then return {'ok'} end -- still empty
  return {'resync'}
end
local last = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)[1]
local whole = after == '0-0' and first[2][2] == ''
if (lt(after, first[1]) and not whole) or lt(last[1], after) then return {'resync'} end
local max = tonumber(ARGV[2])
local out = {'ok'}
for _, e in ipairs(redis.call('XRANGE', KEYS[1], after, '+', 'COUNT', max + 1)) do
  if e[1] ~= after and e[2][2] ~= '' and #out < 2 * max + 1 then
    out[#out + 1] = e[1]
    out[#out + 1] = e[2][2]
  end
end
return out
