-- ban_mirror: copy one of a user's ban records (ban.lua) to the user's own slot, where their
-- writes check it together with their rate limit.
-- KEYS[1]  zset {u:<user>}:bans: scope ("*" for the site, else the group) → when the ban ends
--          (Unix ms; 2^53 when permanent); a ban scored at or before now has ended
-- KEYS[2]  hash {u:<user>}:bans:ver: scope → "<version> <nonce>" of the record KEYS[1] last
--          applied
-- ARGV[1]  the scope   ARGV[2] the record's version   ARGV[3] the record's score (when a lifted
--          ban was lifted)   ARGV[4] now (Unix ms)   ARGV[5] the record's nonce
-- Reply    1 when the copy changed, 0 when it already held this record or a later one.
-- Repeat   version-guarded: a repeated or late copy of an older record changes nothing. The
--          versions are kept when ended bans are dropped, so that the guard holds. A record of
--          the version applied but another nonce is applied: versions are the scope slot's
--          revision counter, which a failover without WAIT can set back, so a later record may
--          reuse the version of one that was lost — the record the scope holds is the truth.
-- Revision KEYS[#KEYS] is the revision counter of the keys' aggregate; every run raises it, so
--          that a cached response that read the aggregate is known to be stale (store/revisions.go).
redis.call('INCR', KEYS[#KEYS])
local held = redis.call('HGET', KEYS[2], ARGV[1]) or '0'
local sep = string.find(held, ' ', 1, true)
local have, nonce = tonumber(sep and string.sub(held, 1, sep - 1) or held), sep and string.sub(held, sep + 1) or ''
local ver = tonumber(ARGV[2])
if have > ver or (have == ver and nonce == ARGV[5]) then return 0 end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2] .. ' ' .. ARGV[5])
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[4])
return 1
