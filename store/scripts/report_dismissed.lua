-- report_dismissed: count a dismissed report against its reporter (see reportdismissals.go).
-- KEYS[1]  sorted set {u:<reporter>}:dismissed, report id → when it was dismissed (Unix ms)
-- ARGV[1]  the report's id   ARGV[2] when it was dismissed (Unix ms)   ARGV[3] now (Unix ms)
-- ARGV[4]  the window (ms)
-- Reply    1 when counted now, 0 when it already was (or is older than the window).
-- Repeat   the member is the report's id: a second run adds nothing.
-- Revision none (unrevised in store/scripts.go): the report's own state changes in
--          report_resolve.lua, which raises the revision of {reports}; this set is read only by
--          the rate limit of the reporter's next report (ratelimit.lua), never by a response
--          (TestDismissedReportReadsFresh).
local at, now, window = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
if at <= now - window then return 0 end
local added = redis.call('ZADD', KEYS[1], 'NX', at, ARGV[1]) -- first: refused when Redis is full (ratelimit.lua)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local newest = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
redis.call('PEXPIREAT', KEYS[1], tonumber(newest[2]) + window)
return added
