-- lease_note: note, in a user's slot, a conversation where the user's send lease may be granted,
-- before the checks of the message that may grant it read the user's bans (in the same round
-- trip, after this, on the same slot): an end of the user's leases that follows a change of
-- what those checks read walks this set, so it reaches every conversation whose lease was, or
-- is being, granted by checks that missed the change (message_leases.go).
-- KEYS[1]  zset {u:<user>}:mleases (other user → until when a lease with them may hold, Unix ms)
-- ARGV[1]  the other user   ARGV[2] until (Unix ms)   ARGV[3] now (Unix ms)   ARGV[4] how long
--          the set is kept after this note (ms): past every lease it notes
-- Reply    1.
-- Repeat   noting again keeps the later end.
-- Full     the note is written by ZADD first, which Redis refuses when it is full, so that a
--          refused note trims nothing either (ZREMRANGEBYSCORE alone would run).
-- Revision none: no response reads it.
redis.call('ZADD', KEYS[1], 'GT', ARGV[2], ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return 1
