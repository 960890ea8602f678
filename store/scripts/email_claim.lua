-- email_claim: claim an email address for a user, so that an address belongs to one account.
-- KEYS[1]  hash {e:<address>} (user, at)
-- ARGV[1]  user key   ARGV[2] now (Unix ms)   ARGV[3] a stale owner the caller found ("" for none):
--          its claim is taken over
-- Reply    "OK" when the address is the user's now; {owner, at} when another user holds it.
-- Keeps    the time of a claim released unverified less than a link's life ago (at without user,
--          email_release.lua): the new claim lapses when the released one would have. A claim
--          taken over, or made on no record, is made now.
-- Repeat   a second run finds the user's own claim and replies "OK".
-- Revision none read by a response (unrevised).
local owner = redis.call('HGET', KEYS[1], 'user')
if owner and owner ~= ARGV[1] and owner ~= ARGV[3] then
  return {owner, redis.call('HGET', KEYS[1], 'at') or '0'}
end
if owner ~= ARGV[1] then
  local at = ARGV[2]
  if not owner then at = redis.call('HGET', KEYS[1], 'at') or at end
  redis.call('HSET', KEYS[1], 'user', ARGV[1], 'at', at)
  redis.call('PERSIST', KEYS[1])
end
return 'OK'
