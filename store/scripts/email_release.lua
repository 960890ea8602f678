-- email_release: release a user's claim on an email address.
-- KEYS[1]  hash {e:<address>} (user, at)   ARGV[1] user key   ARGV[2] "1" when the address was not
--          verified: the claim's time is kept (ARGV[3] ms, a link's life) for the next claim
--          (email_claim.lua), so that an address nobody verified is not held for longer than a
--          link's life by setting another address and then this one again, or by handing it to
--          another account; "0" (or absent) to drop the claim whole
--          ARGV[3] how long the time is kept (ms)
-- Reply    1 when released, 0 when another user (or nobody) held it.
-- Repeat   a second run finds no claim of the user's and replies 0.
-- Revision none read by a response (unrevised).
if redis.call('HGET', KEYS[1], 'user') == ARGV[1] then
  if ARGV[2] == '1' and redis.call('HEXISTS', KEYS[1], 'at') == 1 then
    redis.call('HDEL', KEYS[1], 'user')
    redis.call('PEXPIRE', KEYS[1], ARGV[3])
  else
    redis.call('DEL', KEYS[1])
  end
  return 1
end
return 0
