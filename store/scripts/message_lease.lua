-- message_lease: end the send leases of a conversation (message_send.lua, "Lease").
-- KEYS[1]  conversation hash {m:<a>:<b>}
-- ARGV[1]  "revoke": every lease of the conversation stops holding, and so does any grant whose
--          checks read the conversation before this run (bv rises); "drop": only the lease of
--          the user ARGV[2] goes (a sender found over their limit)   ARGV[2], ARGV[3] the pair's
--          user keys ("revoke"), or the user whose lease goes ("drop")
-- Reply    1 when the conversation exists, 0 when it does not (nothing is written then: a lease
--          lives only in a conversation's hash, which the first message makes).
-- Repeat   a second run raises bv again, which only ends leases the first run ended.
-- Revision none: no response reads a lease, so no cached response is made stale by one.
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if ARGV[1] == 'revoke' then
  redis.call('HINCRBY', KEYS[1], 'bv', 1)
  redis.call('HDEL', KEYS[1], 'g:' .. ARGV[2], 'g:' .. ARGV[3])
else
  redis.call('HDEL', KEYS[1], 'g:' .. ARGV[2])
end
return 1
