-- email_set: set a user's email address (unverified) and store a verification token.
-- KEYS[1]  user hash {u:<user>}   KEYS[2] the token string {u:<user>}:verify:<digest>
-- ARGV[1]  address   ARGV[2] the token's expiry (Unix ms)   ARGV[3] the token's TTL (ms)
--          ARGV[4] the user's address as the caller read it, when it is ARGV[1] in another case
--          (lower-cased as Go does, which string.lower cannot: it folds ASCII only), else "": the
--          same address, whose verification stays (a verified address stays its account's; were
--          it unverified, its claim, older than a link's life, would count as lapsed at once)
-- Reply    {previous address ("" for none), "1" when it was verified else "0"}; error "NOTFOUND"
--          when the user does not exist.
-- Repeat   a second run finds the address set and changes nothing more than the first (its
--          reply then names the address as the previous one: the caller releases nothing).
-- Revision KEYS[#KEYS] (the user's aggregate).
if redis.call('EXISTS', KEYS[1]) == 0 then return redis.error_reply('NOTFOUND no such user') end
redis.call('INCR', KEYS[#KEYS])
local old = redis.call('HGET', KEYS[1], 'email') or ''
local verified = redis.call('HGET', KEYS[1], 'emailv') == '1' and '1' or '0'
if old ~= ARGV[1] then
  redis.call('HSET', KEYS[1], 'email', ARGV[1])
  if ARGV[4] == '' or old ~= ARGV[4] then redis.call('HSET', KEYS[1], 'emailv', '0') end
end
redis.call('SET', KEYS[2], ARGV[1] .. '\n' .. ARGV[2], 'PX', ARGV[3])
return {old, verified}
