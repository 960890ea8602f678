-- watch: set a user's watch mode of a post's thread or of a group.
-- KEYS[1]  hash {p:<id>}:watch or {g:<name>}:watch (user key → "A" | "M")   KEYS[2] set
--          {p:<id>}:watch:all or {g:<name>}:watch:all (the users with "A")   KEYS[3] (posts only)
--          the post hash {p:<id>}, which must be live
-- ARGV[1]  user key   ARGV[2] "A" (ALL), "M" (MUTED), "R" (REPLIES, chosen: it wins over a
--          muted group), or "" (no entry: REPLIES by default)
-- Reply    1
-- Errors   NOTFOUND (KEYS[3] given and the post missing or deleted).
-- Repeat   it sets absolute state: a second run changes nothing.
-- Revision KEYS[#KEYS] is the mode hash's own revision counter, <KEYS[1]>:rev (store/keys.go,
--          ownRevision), not the post's or the group's: a mode is the watcher's alone (viewerWatch),
--          so a watch leaves the answers everyone shares standing. Every run that sets a mode
--          raises it; a refused one changes nothing and raises nothing.
if #KEYS > 3 then
  local p = KEYS[3]
  if not redis.call('HGET', p, 'author') or redis.call('HGET', p, 'deleted') == '1' then
    return redis.error_reply('NOTFOUND no such post')
  end
end
redis.call('INCR', KEYS[#KEYS])
local user, mode = ARGV[1], ARGV[2]
if mode == '' then redis.call('HDEL', KEYS[1], user) else redis.call('HSET', KEYS[1], user, mode) end
if mode == 'A' then redis.call('SADD', KEYS[2], user) else redis.call('SREM', KEYS[2], user) end
return 1
