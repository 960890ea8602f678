-- ban: ban a user from a group or from the site, replacing any ban they have there, or lift the
-- ban in force, and record the action in the scope's moderation outbox, from which the caller
-- writes it into the moderation log. The authoritative record of the scope's bans; the user's
-- own copy follows (ban_mirror.lua).
-- KEYS[1]  zset of the scope's ban records ({g:<group>}:bans or {site}:bans): user key → when the
--          ban ends (Unix ms; 2^53 when permanent); a record scored at or before now has ended
--          (expired, or lifted: a lifted ban is scored by when it was lifted)
-- KEYS[2]  hash of the records ({g:<group>}:bans:info or {site}:bans:info): user key → JSON
--          {v: version, by: moderator, at: ms, r: reason, off: true when lifted, n: nonce, adm: "1"
--          when an admin set it}; numbers as strings, so that they survive cjson whole. Lifting a ban keeps its moderator, start
--          and reason: the record then holds the ended ban.
-- KEYS[3]  the scope's moderation outbox ({g:<group>}:modlog or {site}:modlog): hash action key →
--          action JSON
-- KEYS[4]  a group's only: zset of the group's moderators
-- ARGV[1]  "ban" | "unban"   ARGV[2] the user   ARGV[3] the moderator
-- ARGV[4]  "1" when the moderator is a site admin (Options.Admins; the server's, not the client's)
-- ARGV[5]  now (Unix ms)   ARGV[6] a nonce, the same for every repeat of one call
-- ARGV[7]  when records that ended before it are dropped (Unix ms; at most 50 a run)
-- ARGV[8]  ban: when it ends (Unix ms, 2^53 for good)   ARGV[9] ban: the reason
-- ARGV[10] the group ("" for a site ban)
-- Reply    {changed (0|1), outbox (HGETALL), score, record JSON} with the user's record as the
--          call leaves it; {0, outbox} for an unban that found no record.
-- Errors   FORBIDDEN: the moderator moderates neither the group nor the site, or bans (or lifts
--          the ban of) another moderator of the group, which only an admin may; or, not an admin,
--          replaces or lifts a ban an admin set that is in force (its record's adm), which only
--          an admin may, as only the admins undo an admin's removal.
-- Version  a record's version is the value of the slot's revision counter when it was written: it
--          rises with every write of the slot and is never reset, so a later record of a user
--          has a larger version than any earlier one, even one dropped since.
-- Writes   with each record, one outbox entry whose key is "<ban|unban>:<g:<group>|site>:<user>:
--          <version>", so that every action has its own entry and id.
-- Repeat   a run with the nonce of the record replies with it unchanged; banning again with the
--          same end and reason while the ban is in force changes nothing either, nor does lifting
--          a ban not in force. It still replies with the outbox, so that its caller logs what an
--          earlier run left unlogged (a request retried by its client logs its action once).
-- Revision KEYS[#KEYS] is the revision counter of the keys' aggregate; every run raises it, so
--          that a cached response that read the aggregate is known to be stale (store/revisions.go).
local ver = redis.call('INCR', KEYS[#KEYS])
local bans, info, outbox = KEYS[1], KEYS[2], KEYS[3]
local op, user, by, now, nonce, group = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[5]), ARGV[6], ARGV[10]
if ARGV[4] ~= '1' then
  if #KEYS < 5 or not redis.call('ZSCORE', KEYS[4], by) then
    return redis.error_reply('FORBIDDEN only the moderators of the group and the site admins may ban from it')
  end
  if redis.call('ZSCORE', KEYS[4], user) then
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
  return {0, redis.call('HGETALL', outbox), score, raw}
end
local inForce = rec and not rec.off and score and tonumber(score) > now
-- An admin's ban in force is the admins' to lift or replace, as an admin's removal is.
if inForce and rec.adm == '1' and ARGV[4] ~= '1' then
  return redis.error_reply('FORBIDDEN a site admin banned this user from the group: only the site admins may change or lift the ban')
end

local entry = {m = by, t = 'user:' .. user, at = now}
if group ~= '' then entry.g = group end
if op == 'unban' then
  if not inForce then
    if rec and score then return {0, redis.call('HGETALL', outbox), score, raw} end
    return {0, redis.call('HGETALL', outbox)}
  end
  rec = {v = tostring(ver), by = rec.by, at = rec.at, r = rec.r, off = true, n = nonce}
  score = ARGV[5]
  entry.a = 'UNBAN_USER'
else
  if inForce and tonumber(score) == tonumber(ARGV[8]) and rec.r == ARGV[9] then
    return {0, redis.call('HGETALL', outbox), score, raw}
  end
  rec = {v = tostring(ver), by = by, at = ARGV[5], r = ARGV[9], n = nonce}
  if ARGV[4] == '1' then rec.adm = '1' end
  score = ARGV[8]
  entry.a, entry.r = 'BAN_USER', ARGV[9]
  if tonumber(score) < 2^53 then entry.u = tonumber(score) end -- 2^53: for good (permanentScore)
end
raw = cjson.encode(rec)
redis.call('HSET', info, user, raw)
redis.call('ZADD', bans, score, user)
local where = group == '' and 'site' or 'g:' .. group
redis.call('HSET', outbox, op .. ':' .. where .. ':' .. user .. ':' .. ver, cjson.encode(entry))
return {1, redis.call('HGETALL', outbox), score, raw}
