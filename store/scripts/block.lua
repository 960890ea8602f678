-- block: add a user to, or take one out of, the users a user blocks.
-- KEYS[1]  zset {u:<user>}:blocks (blocked user key → when, ms)   KEYS[2] the user's hash {u:<user>}
-- ARGV[1]  the blocked user's key   ARGV[2] "add" | "rem"   ARGV[3] now (Unix ms)   ARGV[4] the
--          most users one may block   ARGV[5] the user's Sessions channel   ARGV[6] "1" to publish
--          with SPUBLISH (sharded pub/sub), "0" with PUBLISH
-- Reply    1 when the user is blocked after the run, 0 when not. Error "LIMIT ..." when adding to
--          a full list; UNAUTHENTICATED, with nothing written, when the user's account is deleted
--          (checks that passed just before the deletion, whose step dropped KEYS[1]: a list
--          made again would stay for good).
-- Event    a run that changes the list publishes {"blocks":"+<user>"} or {"blocks":"-<user>"} on
--          the channel (without a log): the user's open live streams apply it (live.SessionWatch).
-- Repeat   adding a user already blocked keeps the first time; removing one not blocked changes
--          nothing and publishes nothing.
-- Revision KEYS[#KEYS] is the revision counter of the keys' aggregate; every run raises it, so
--          that a cached response that read the aggregate is known to be stale (store/revisions.go).
--          The responses a blocker reads record it (Blocks), so blocking makes them stale.
--!include announce
if redis.call('HGET', KEYS[2], 'deleted') == '1' then
  return redis.error_reply('UNAUTHENTICATED this account was deleted')
end
redis.call('INCR', KEYS[#KEYS])
-- changed announces the change; the user key is a name (letters, digits, '_' and '-'), which
-- needs no JSON escaping.
local function changed(sign)
  announce(ARGV[5], ARGV[6], '{"blocks":"' .. sign .. ARGV[1] .. '"}')
end
if ARGV[2] == 'rem' then
  if redis.call('ZREM', KEYS[1], ARGV[1]) == 1 then changed('-') end
  return 0
end
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 1 end
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[4]) then
  return redis.error_reply('LIMIT you may block at most ' .. ARGV[4] .. ' users')
end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
changed('+')
return 1
