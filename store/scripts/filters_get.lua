-- filters_get: the site filters, when they changed since the version a process holds; it rides in
-- the first round trip of a write (see sitefilters.go), so that a change costs no write a round
-- trip of its own.
-- KEYS[1]  hash {filters}
-- ARGV[1]  the version the caller holds ("" for none)
-- Reply    the version alone when it is ARGV[1]; otherwise {v, a, w, d, by, at} (nil fields when
--          the filters were never set).
-- Repeat   reads only.
local v = redis.call('HGET', KEYS[1], 'v') or ''
if v == ARGV[1] then return v end
return redis.call('HMGET', KEYS[1], 'v', 'a', 'w', 'd', 'by', 'at')
