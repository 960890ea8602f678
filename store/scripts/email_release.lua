-- email_release: release a user's claim on an email address.
-- KEYS[1]  hash {e:<address>}   ARGV[1] user key
-- Reply    1 when released, 0 when another user (or nobody) held it.
-- Repeat   a second run finds no claim of the user's and replies 0.
-- Revision none read by a response (unrevised).
if redis.call('HGET', KEYS[1], 'user') == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return 1
end
return 0
