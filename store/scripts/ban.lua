-- ban: ban a user from a group or from the site, replacing any ban they have there, or lift the
-- ban in force. The authoritative record of the scope's bans; the user's own copy follows
-- (ban_mirror.lua).
-- KEYS[1]  zset of the scope's ban records ({g:<group>}:bans or {site}:bans): user key → when the
--          ban ends (Unix ms; 2^53 when permanent); a record scored at or before now has ended
--          (expired, or lifted: a lifted ban is scored by when it was lifted)
-- KEYS[2]  hash of the records ({g:<group>}:bans:info or {site}:bans:info): user key → JSON
--          {v: version, by: moderator, at: ms, r: reason, off: true when lifted, n: nonce}; numbers
--          as strings, so that they survive cjson whole
-- KEYS[3]  a group's only: zset of the group's moderators
-- ARGV[1]  "ban" | "unban"   ARGV[2] the user   ARGV[3] the moderator
-- ARGV[4]  "1" when the moderator is a site admin (Options.Admins; the server's, not the client's)
-- ARGV[5]  now (Unix ms)   ARGV[6] a nonce, the same for every repeat of one call
-- ARGV[7]  when records that ended before it are dropped (Unix ms; at most 50 a run)
-- ARGV[8]  ban: when it ends (Unix ms, 2^53 for good)   ARGV[9] ban: the reason
-- Reply    {score, record JSON} of the user's record as the call leaves it; false for an unban
--          that found no ban in force.
-- Errors   FORBIDDEN: the moderator moderates neither the group nor the site, or bans (or lifts
--          the ban of) another moderator of the group, which only an admin may.
-- Version  a record's version is the value of the slot's revision counter when it was written: it
--          rises with every write of the slot and is never reset, so a later record of a user
--          has a larger version than any earlier one, even one dropped since.
-- Repeat   a run with the nonce of the record replies with it unchanged; banning again with the
--          same end and reason while the ban is in force changes nothing either (a request
--          retried by its client logs its action once).
-- Revision KEYS[#KEYS] is the revision counter of the keys' aggregate; every run raises it, so
--          that a cached response that read the aggregate is known to be stale (store/revisions.go).
local ver = redis.call('INCR', KEYS[#KEYS])
local bans, info = KEYS[1], KEYS[2]
local op, user, by, now, nonce = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[5]), ARGV[6]
if ARGV[4] ~= '1' then
  if #KEYS < 4 or not redis.call('ZSCORE', KEYS[3], by) then
    return redis.error_reply('FORBIDDEN only the moderators of the group and the site admins may ban from it')
  end
  if redis.call('ZSCORE', KEYS[3], user) then
    return redis.error_reply('FORBIDDEN moderators of the group cannot ban one another; ask a site admin')
  end
end

local old = redis.call('ZRANGEBYSCORE', bans, '-inf', '(' .. ARGV[7], 'LIMIT', 0, 50)
for _, u in ipairs(old) do
  redis.call('ZREM', bans, u)
  redis.call('HDEL', info, u)
end

local raw = redis.call('HGET', info, user)
local score = redis.call('ZSCORE', bans, user)
local rec = raw and cjson.decode(raw)
if rec and rec.n == nonce then
  return {score, raw}
end
local inForce = rec and not rec.off and score and tonumber(score) > now

if op == 'unban' then
  if not inForce then return false end
  rec = {v = tostring(ver), by = by, at = ARGV[5], off = true, n = nonce}
  score = ARGV[5]
else
  if inForce and tonumber(score) == tonumber(ARGV[8]) and rec.r == ARGV[9] then
    return {score, raw}
  end
  rec = {v = tostring(ver), by = by, at = ARGV[5], r = ARGV[9], n = nonce}
  score = ARGV[8]
end
raw = cjson.encode(rec)
redis.call('HSET', info, user, raw)
redis.call('ZADD', bans, score, user)
return {score, raw}
