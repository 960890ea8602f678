-- karma: record the net votes of one post or comment for its author and keep the author's karma
-- equal to the sum of the recorded nets, moving the total by the exact difference.
-- KEYS[1]  hash {u:<a>}:karma (total, ver)
-- KEYS[2]  hash {u:<a>}:karma:items (item global id → "<item version> <net>")
-- KEYS[3]  hash {u:<a>}: a deleted account's marker (deleted = 1) records nothing
-- ARGV[1]  item global id   ARGV[2] item version   ARGV[3] the item's net votes at that version
-- Reply    {total, karma version}; the karma version rises whenever the total changes. {0, -1}
--          for a deleted author: their karma went with the account.
-- Repeat   the item's version guard makes a repeated or late record (an older version) a no-op,
--          so concurrent votes recorded in any order leave the total exact.
-- Revision KEYS[#KEYS] is the revision counter of the keys' aggregate; every run raises it, so
--          that a cached response that read the aggregate is known to be stale (store/revisions.go).
redis.call('INCR', KEYS[#KEYS])
if redis.call('HGET', KEYS[3], 'deleted') == '1' then return {0, -1} end
local cur = redis.call('HGET', KEYS[2], ARGV[1])
local curVer, curNet = -1, 0
if cur then
  local sp = string.find(cur, ' ', 1, true)
  curVer = tonumber(string.sub(cur, 1, sp - 1))
  curNet = tonumber(string.sub(cur, sp + 1))
end
if tonumber(ARGV[2]) > curVer then
  local net = tonumber(ARGV[3])
  redis.call('HSET', KEYS[2], ARGV[1], ARGV[2] .. ' ' .. ARGV[3])
  if net ~= curNet then
    redis.call('HINCRBY', KEYS[1], 'total', net - curNet)
    redis.call('HINCRBY', KEYS[1], 'ver', 1)
  end
end
return {tonumber(redis.call('HGET', KEYS[1], 'total') or '0'), tonumber(redis.call('HGET', KEYS[1], 'ver') or '0')}
