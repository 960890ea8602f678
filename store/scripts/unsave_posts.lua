-- unsave_posts: take posts out of the user's saved posts.
-- KEYS[1]  zset {u:<user>}:saved (post key → when saved, Unix ms)
-- ARGV     the post keys ("17") to take out; those not saved are ignored
-- Reply    how many were taken out.
-- Repeat   a second run finds them gone and changes nothing.
-- Revision KEYS[#KEYS] is the revision counter of the keys' aggregate; every run raises it, so
--          that a cached response that read the aggregate is known to be stale (store/revisions.go).
redis.call('INCR', KEYS[#KEYS])
return redis.call('ZREM', KEYS[1], unpack(ARGV))
