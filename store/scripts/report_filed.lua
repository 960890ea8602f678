-- report_filed: record a report in its reporter's history (the migration to layout 6, which
-- derives the histories from the reports written before report_reserve kept them).
-- KEYS[1]  the reporter's hash {u:<user>}   KEYS[2] zset {u:<user>}:reports:filed
-- ARGV[1]  the report's id   ARGV[2] when it was made (Unix ms)
-- Reply    1 when recorded (or already there), 0 when the reporter has no account or deleted it:
--          a deletion dropped the history, and nothing brings it back.
-- Repeat   ZADD of the same member and score: a second run changes nothing.
-- Revision KEYS[#KEYS] is the revision counter of the keys' aggregate; every run raises it, so
--          that a cached response that read the aggregate is known to be stale (store/revisions.go).
redis.call('INCR', KEYS[#KEYS])
if redis.call('HEXISTS', KEYS[1], 'created') == 0 or redis.call('HGET', KEYS[1], 'deleted') == '1' then
  return 0
end
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])
return 1
