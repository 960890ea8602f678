-- active: count a user as active in a group, in the group's HyperLogLogs of users active per
-- hour, day and month (see activity.go).
-- KEYS[1..]  HyperLogLogs {g:<name>}:au:<bucket>, one hash slot
-- ARGV[1]    user key   ARGV[2..] when each key expires (Unix ms), one per key
-- Reply      1
-- Repeat     PFADD of a user already counted changes nothing; the expiry is set again alike.
-- Revision   none: the counts are time-dependent, and a response that reads them is never cached
--            (Revisions.timeDependent), so no revision need record them.
for i = 1, #KEYS do
  redis.call('PFADD', KEYS[i], ARGV[1])
  redis.call('PEXPIREAT', KEYS[i], ARGV[i + 1])
end
return 1
