-- journal: the list of writes whose derived writes may be unfinished (store/repair.go).
-- KEYS[1]  zset {repairs}: item ("post:<id>", "comment:<post>:<num>", ...) → when it is due (ms)
-- ARGV[1]  "note" | "claim" | "done"
-- note     ARGV[2] item   ARGV[3] due (ms). Reply: the due time written.
-- claim    ARGV[2] now (ms)   ARGV[3] lease end (ms)   ARGV[4] most items. Takes the items due by
--          now, moving each to the lease end so that another process takes it only if this one
--          does not finish it in time. Reply: {item, lease end, item, lease end, ...}.
-- done     ARGV[2] item   ARGV[3] the due time its taker saw. Removes the item unless it has been
--          noted again since (a later write of the same item is still in flight). Reply: 1 or 0.
-- Repeat   note and done are idempotent; a repeated claim takes nothing still leased.
local op = ARGV[1]
if op == 'note' then
  redis.call('ZADD', KEYS[1], ARGV[3], ARGV[2])
  return ARGV[3]
elseif op == 'claim' then
  local items = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[2], 'LIMIT', 0, tonumber(ARGV[4]))
  local out = {}
  for _, item in ipairs(items) do
    redis.call('ZADD', KEYS[1], ARGV[3], item)
    out[#out + 1] = item
    out[#out + 1] = ARGV[3]
  end
  return out
elseif op == 'done' then
  local due = redis.call('ZSCORE', KEYS[1], ARGV[2])
  if due and tonumber(due) == tonumber(ARGV[3]) then
    redis.call('ZREM', KEYS[1], ARGV[2])
    return 1
  end
  return 0
end
return redis.error_reply('ERR journal: unknown operation ' .. tostring(op))
