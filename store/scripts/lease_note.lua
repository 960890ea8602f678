-- lease_note: note, in a user's slot, a conversation where the user's send lease may be granted,
-- before the checks of the message that may grant it read the user's bans (in the same round
-- trip, after this, on the same slot): an end of the user's leases that follows a change of
-- what those checks read walks this set, so it reaches every conversation whose lease was, or
-- is being, granted by checks that missed the change (message_leases.go).
-- KEYS[1]  zset {u:<user>}:mleases (other user → until when a lease with them may hold, Unix ms)
-- ARGV[1]  the other user   ARGV[2] until (Unix ms)   ARGV[3] the most notes kept (the latest)
--          ARGV[4] how long the set is kept after this note (ms): past every lease it notes
-- Reply    1.
-- Repeat   noting again keeps the later end.
-- Full     the note is written by ZADD first, which Redis refuses when it is full, so that a
--          refused note trims nothing either (ZREMRANGEBYRANK alone would run).
-- Trim     by count, not by this replica's clock: a replica whose clock runs ahead would take
--          away the notes of leases that still hold by the others'. Notes that ended stay until
--          the set expires, a minute or so after its last note, or is past its size; an end of
--          the user's leases that walks them raises the versions of those conversations for
--          nothing.
-- Revision none: no response reads it.
redis.call('ZADD', KEYS[1], 'GT', ARGV[2], ARGV[1])
redis.call('ZREMRANGEBYRANK', KEYS[1], 0, -(tonumber(ARGV[3]) + 1))
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return 1
