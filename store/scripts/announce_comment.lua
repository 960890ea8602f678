-- announce_comment: announce a new comment once, on its thread's channel (commentAdded) and its
-- post's (postChanged: the comment count moved), if its announcement is still pending.
-- KEYS[1]  the comment's hash {p:<id>}:c:<number>, whose field pa (set by create_comment.lua)
--          says that the comment is not announced yet   KEYS[2] stream <channel>:log of the
--          thread's channel {p:<id>}:ev:comments   KEYS[3] stream <channel>:log of the post's
--          channel {p:<id>}:ev:changed (the same hash tag)
-- ARGV[1]  the thread's channel   ARGV[2] its event, a JSON object   ARGV[3] entries its log keeps
-- ARGV[4]  the post's channel   ARGV[5] its event   ARGV[6] entries its log keeps
-- ARGV[7]  seconds a log lives after its last event   ARGV[8] "1": SPUBLISH (sharded)
-- Reply    1 if it announced the comment, 0 if it was announced already (or is gone).
-- Once     the write that created the comment runs it after its derived writes, and the
--          comment's repair job runs it too, so that a creation cut off after its atomic step (a
--          process that died, Redis full) is announced when it is finished, and a creation
--          announced is not announced again by a repair or a retry.
-- Full     announced even when Redis is full: the comment is written. The HDEL first is a write
--          that Redis never refuses, after which the rest of the script runs (see mail_sent.lua);
--          the logs are capped.
-- Repeat   a second run finds pa gone and announces nothing.
--!include announce
--!include log_event
if redis.call('HDEL', KEYS[1], 'pa') == 0 then
  return 0
end
log_event(KEYS[2], ARGV[1], ARGV[2], ARGV[3], ARGV[7], ARGV[8])
log_event(KEYS[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7], ARGV[8])
return 1
