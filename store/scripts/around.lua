-- around: the members ranked around one member of a sorted set, in ascending order, read at one
-- instant so that ranks and neighbours agree.
-- KEYS[1]  sorted set
-- ARGV[1]  member   ARGV[2] radius (members on each side)
-- Reply    {start, member1, score1, member2, score2, ...} where start is the 0-based rank of
--          member1; {} when the member is not in the set.
-- Read-only.
local r = redis.call('ZRANK', KEYS[1], ARGV[1])
if not r then return {} end
local radius = tonumber(ARGV[2])
local start = math.max(0, r - radius)
local items = redis.call('ZRANGE', KEYS[1], start, r + radius, 'WITHSCORES')
local reply = {start}
for i = 1, #items do reply[#reply + 1] = items[i] end
return reply
