-- token_take: use a single-use token of a user: verify an email address, or start a password reset.
-- KEYS[1]  the token string {u:<user>}:<purpose>:<digest>   KEYS[2] user hash {u:<user>}
-- ARGV[1]  now (Unix ms)
-- Reply    the user's password hash; error "INVALID ..." when the token is unknown, used or
--          expired (its expiry is compared with ARGV[1], so it is exact at read time), or when
--          the address it was sent to is no longer the user's. The token is deleted, and the
--          address marked verified (a reset's mail proves it too).
-- Repeat   a second run finds the token gone: the token is single-use.
-- Revision KEYS[#KEYS] (the user's aggregate).
-- Full     a token that works is used by INCR first, which Redis refuses when it is full, so that
--          a refused use changes nothing (the token stays); a DEL first would let the script run
--          on (see OPERATIONS.md, "When Redis is full").
local v = redis.call('GET', KEYS[1])
if not v then return redis.error_reply('INVALID invalid or expired token') end
local addr, exp = string.match(v, '^(.*)\n(%d+)$')
if not exp or tonumber(exp) <= tonumber(ARGV[1]) or redis.call('HGET', KEYS[2], 'email') ~= addr then
  redis.call('DEL', KEYS[1])
  return redis.error_reply('INVALID invalid or expired token')
end
redis.call('INCR', KEYS[#KEYS])
redis.call('HSET', KEYS[2], 'emailv', '1')
redis.call('DEL', KEYS[1])
return redis.call('HGET', KEYS[2], 'pass') or ''
