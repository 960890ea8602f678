-- signup: create a user unless the (case-folded) name is taken.
-- KEYS[1]  user hash {u:<name>}
-- ARGV[1]  display name   ARGV[2] encoded password hash   ARGV[3] created (Unix ms)
-- Reply    "OK"; error "CONFLICT ..." when the name is taken by someone else, or was the name of
--          an account since deleted (names stay reserved for ever: ids derive from them).
-- Repeat   a second run with the same ARGV finds its own password hash and replies "OK".
-- Revision KEYS[#KEYS] is the revision counter of the keys' aggregate; every run raises it, so
--          that a cached response that read the aggregate is known to be stale (store/revisions.go).
redis.call('INCR', KEYS[#KEYS])
if redis.call('HGET', KEYS[1], 'deleted') == '1' then
  return redis.error_reply('CONFLICT the name "' .. ARGV[1] .. '" is taken')
end
local pass = redis.call('HGET', KEYS[1], 'pass')
if pass then
  if pass == ARGV[2] then return 'OK' end
  return redis.error_reply('CONFLICT the name "' .. ARGV[1] .. '" is taken')
end
redis.call('HSET', KEYS[1], 'name', ARGV[1], 'pass', ARGV[2], 'created', ARGV[3])
return 'OK'
