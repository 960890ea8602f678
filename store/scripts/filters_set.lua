-- filters_set: replace the site filters (an admin's updateSiteFilters; see sitefilters.go).
-- KEYS[1]  hash {filters}
-- ARGV[1]  action   ARGV[2] words (JSON array), or "" to keep them   ARGV[3] domains (JSON
--          array), or "" to keep them   ARGV[4] the admin's user key   ARGV[5] now (Unix ms)
-- Reply    {v, a, w, d, by, at} as they are after the change.
-- Repeat   the version is raised only when the action, the words or the domains change, so a
--          second run changes nothing.
-- Revision KEYS[#KEYS], raised with the version.
local cur = redis.call('HMGET', KEYS[1], 'a', 'w', 'd')
local a, w, d = ARGV[1], ARGV[2], ARGV[3]
if w == '' then w = cur[2] or '[]' end
if d == '' then d = cur[3] or '[]' end
if a ~= cur[1] or w ~= cur[2] or d ~= cur[3] then
  redis.call('HSET', KEYS[1], 'a', a, 'w', w, 'd', d, 'by', ARGV[4], 'at', ARGV[5])
  redis.call('HINCRBY', KEYS[1], 'v', 1)
  redis.call('INCR', KEYS[#KEYS])
end
return redis.call('HMGET', KEYS[1], 'v', 'a', 'w', 'd', 'by', 'at')
