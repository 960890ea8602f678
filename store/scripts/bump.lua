-- bump: raise a post's version and read it, for rebuilding its derived entries. The version jumps
-- by 2^20, past any version a write lost in a failover could have left on a derived entry (the
-- post hash went back, its derived entries on other masters did not), so the rebuilt entries win.
-- KEYS[1]  post hash {p:<id>}
-- KEYS[#KEYS - 1] the thread's bodies {p:<id>}:c:body, for the post's texts kept apart (read only;
--          see lib/post_texts.lua)
-- Reply    HGETALL of the post after the bump; empty when the post does not exist.
-- Repeat   a second run bumps again, which is harmless: versions only need to grow.
-- Revision KEYS[#KEYS] is the revision counter of the keys' aggregate; every run raises it, so
--          that a cached response that read the aggregate is known to be stale (store/revisions.go).
--!include post_texts
redis.call('INCR', KEYS[#KEYS])
if redis.call('EXISTS', KEYS[1]) == 0 then return {} end
redis.call('HINCRBY', KEYS[1], 'ver', 1048576)
return post_reply(KEYS[1], KEYS[#KEYS - 1])
