-- feed_remove: take one post out of a reader's home feed.
-- KEYS[1]  zset {u:<a>}:feed   KEYS[2] hash {u:<a>}:feed:by
-- ARGV[1]  post id
-- Reply    1 when the post was in the feed, else 0.
-- Repeat   naturally idempotent.
-- Revision KEYS[#KEYS] is the revision counter of the keys' aggregate; every run raises it, so
--          that a cached response that read the aggregate is known to be stale (store/revisions.go).
redis.call('INCR', KEYS[#KEYS])
redis.call('HDEL', KEYS[2], ARGV[1])
return redis.call('ZREM', KEYS[1], ARGV[1])
