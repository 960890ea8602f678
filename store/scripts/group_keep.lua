-- group_keep: make a group last. A group made by posts exists only while it holds posts; once a
-- moderator or an admin acts in it (a removal, a lock, a pin, a ban), what it holds — bans, pins,
-- removed posts that may come back — belongs to it, so it must not vanish and be made anew (and
-- taken) by createGroup. Its info then holds a version, as a group made by createGroup does.
-- KEYS[1]  hash {g:<name>}:info
-- ARGV[1]  now (Unix ms): its created time, if it has none
-- Reply    1 when the group is kept now, 0 when it already was.
-- Repeat   a second run finds the version and changes nothing.
-- Revision KEYS[#KEYS] is the revision counter of the group; a run that keeps it raises it.
if redis.call('HEXISTS', KEYS[1], 'ver') == 1 then return 0 end
redis.call('INCR', KEYS[#KEYS])
redis.call('HSET', KEYS[1], 'ver', 1)
redis.call('HSETNX', KEYS[1], 'created', ARGV[1])
return 1
