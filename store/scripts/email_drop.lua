-- email_drop: take an address out of a user's hash, when the user no longer owns it: their claim
-- on it lapsed unverified and another account took it over, or another account holds it when
-- they verify it (see store/email.go).
-- KEYS[1]  user hash {u:<user>}
-- ARGV[1]  the address as the caller read it from the hash (the same address in another case
--          matches too: string.lower folds ASCII only, while the address's key {e:<address>} is
--          folded by Go's strings.ToLower, so comparing lower-cased forms here would miss an
--          address with upper-case letters beyond ASCII)   ARGV[2] "1" to drop it even when
--          verified, "0" to drop it only while unverified
-- Reply    1 when it was dropped, 0 when the hash holds another address (or a verified one and
--          ARGV[2] is "0").
-- Repeat   a second run finds the address gone and replies 0.
-- Revision KEYS[#KEYS] (the user's aggregate), raised when the address is dropped.
local addr = redis.call('HGET', KEYS[1], 'email')
if not addr or string.lower(addr) ~= string.lower(ARGV[1]) then return 0 end
if ARGV[2] ~= '1' and redis.call('HGET', KEYS[1], 'emailv') == '1' then return 0 end
redis.call('INCR', KEYS[#KEYS])
redis.call('HDEL', KEYS[1], 'email', 'emailv')
return 1
