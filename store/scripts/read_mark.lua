-- read_mark: record that a user read a post's thread up to a comment ordinal, keeping the user's
-- read marks to a bound.
-- KEYS[1]  hash {rd:<user>}:marks (post id → comment ordinal)
-- ARGV[1]  post id   ARGV[2] the post's comment ordinal (cord) when it was read
--          ARGV[3] the most marks kept   ARGV[4] how far past it the hash may grow before it is
--          trimmed (so that a trim, which sorts the marks, runs once every ARGV[4] new marks)
-- Reply    1 when the mark moved, 0 when it already was at or past ARGV[2].
-- Trim     past ARGV[3] + ARGV[4] marks, those of the oldest posts (lowest ids) go, down to
--          ARGV[3]: the hash stays below 128 entries, so Redis keeps it listpack-encoded.
-- Repeat   a mark only moves forward, so a second run (or a late one) changes nothing.
-- Revision KEYS[#KEYS] is the revision counter of the keys' aggregate; every run raises it, so
--          that a cached response that read the aggregate is known to be stale (store/revisions.go).
redis.call('INCR', KEYS[#KEYS])
local old = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '-1')
if tonumber(ARGV[2]) <= old then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
local keep = tonumber(ARGV[3])
if redis.call('HLEN', KEYS[1]) > keep + tonumber(ARGV[4]) then
  local ids = redis.call('HKEYS', KEYS[1])
  table.sort(ids, function(a, b) return tonumber(a) > tonumber(b) end)
  for i = keep + 1, #ids do redis.call('HDEL', KEYS[1], ids[i]) end
end
return 1
