-- pin_post: a moderator of a group (or a site admin) pins a post at the top of the group's
-- listings, or unpins it, and records the action in the group's moderation outbox, from which the
-- caller writes it into the moderation log. The group's pins are the authoritative record.
-- KEYS[1]  the group's pins {g:<group>}:pins (sorted set post key → when pinned, ms)
-- KEYS[2]  the group's moderators {g:<group>}:mods   KEYS[3] the group's moderation outbox
--          {g:<group>}:modlog (hash action key → action JSON)
-- ARGV[1]  the post's key   ARGV[2] "1" to pin, "0" to unpin   ARGV[3] the moderator's user key
-- ARGV[4]  "1" when the moderator is a site admin (the caller decides it from its options)
-- ARGV[5]  most pins a group may hold   ARGV[6] now (Unix ms)   ARGV[7] "1" when a reason is
--          given, else "0"   ARGV[8] the reason   ARGV[9] the group
-- Reply    {changed (0|1), outbox (HGETALL)}
-- Errors   FORBIDDEN (neither a moderator of the group nor an admin), LIMIT (the group holds the
--          most pins already).
-- Writes   one outbox entry whose key is "<pin_post|unpin_post>:<group>:<post>:<revision>", the
--          group's revision after this run, so that every action has its own entry and id.
-- Repeat   a second run finds the pin as asked and changes nothing; it still replies with the
--          outbox, so that its caller logs what an earlier run left unlogged.
-- Revision KEYS[#KEYS] is the revision counter of the keys' aggregate; every run raises it, so
--          that a cached response that read the aggregate is known to be stale (store/revisions.go).
local rev = redis.call('INCR', KEYS[#KEYS])
local pins, pid, actor = KEYS[1], ARGV[1], ARGV[3]
if ARGV[4] ~= '1' and not redis.call('ZSCORE', KEYS[2], actor) then
  return redis.error_reply('FORBIDDEN only the moderators of group ' .. ARGV[9] .. ' and the site admins may pin in it')
end
local pinned = redis.call('ZSCORE', pins, pid) ~= false
local want = ARGV[2] == '1'
local changed = 0
if pinned ~= want then
  local action = 'UNPIN_POST'
  if want then
    if redis.call('ZCARD', pins) >= tonumber(ARGV[5]) then
      return redis.error_reply('LIMIT group ' .. ARGV[9] .. ' holds ' .. ARGV[5] .. ' pinned posts already: unpin one first')
    end
    redis.call('ZADD', pins, ARGV[6], pid)
    action = 'PIN_POST'
  else
    redis.call('ZREM', pins, pid)
  end
  local rec = {a = action, m = actor, g = ARGV[9], t = 'post:' .. pid, at = tonumber(ARGV[6])}
  if ARGV[7] == '1' then rec.r = ARGV[8] end
  redis.call('HSET', KEYS[3], string.lower(action) .. ':' .. ARGV[9] .. ':' .. pid .. ':' .. rev, cjson.encode(rec))
  changed = 1
end
return {changed, redis.call('HGETALL', KEYS[3])}
