-- token_take: use a single-use token of a user: verify an email address, or start a password reset.
-- KEYS[1]  the token string {u:<user>}:<purpose>:<digest>   KEYS[2] user hash {u:<user>}
-- ARGV[1]  now (Unix ms)
-- Reply    the user's password hash; error "INVALID ..." when the token is unknown, used or
--          expired (its expiry is compared with ARGV[1], so it is exact at read time), when
--          the address it was sent to is no longer the user's, or, for a reset's, when the
--          password is no longer the one it was made under (changed, or the account deleted:
--          no password hash), or when the account was deleted (its marker keeps the address
--          until the deletion's chain releases it). The token is deleted, and the address marked
--          verified (a reset's mail proves it too).
-- Repeat   a second run finds the token gone: the token is single-use.
-- Revision KEYS[#KEYS] (the user's aggregate).
-- Full     a token that works is used by INCR first, which Redis refuses when it is full, so that
--          a refused use changes nothing (the token stays); a DEL first would let the script run
--          on (see OPERATIONS.md, "When Redis is full").
local v = redis.call('GET', KEYS[1])
if not v then return redis.error_reply('INVALID invalid or expired token') end
-- A reset's token holds the SHA-1 of the password hash it was made under (token_put); a
-- verification's, and a reset's stored before token_put wrote one, hold none.
local addr, exp, pass = string.match(v, '^([^\n]*)\n(%d+)\n(%x+)$')
if not exp then addr, exp = string.match(v, '^([^\n]*)\n(%d+)$') end
local cur = redis.call('HGET', KEYS[2], 'pass')
if not exp or tonumber(exp) <= tonumber(ARGV[1]) or redis.call('HGET', KEYS[2], 'email') ~= addr
  or redis.call('HGET', KEYS[2], 'deleted') == '1'
  or (pass and (not cur or redis.sha1hex(cur) ~= pass)) then
  redis.call('DEL', KEYS[1])
  return redis.error_reply('INVALID invalid or expired token')
end
redis.call('INCR', KEYS[#KEYS])
redis.call('HSET', KEYS[2], 'emailv', '1')
redis.call('DEL', KEYS[1])
return cur or ''
