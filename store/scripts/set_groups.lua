-- set_groups: add a post to groups and remove it from others.
-- KEYS[1]  post hash {p:<id>}
-- ARGV[1]  the acting user key   ARGV[2] most groups a post may have   ARGV[3] n, the count of
--          groups to add   ARGV[4 .. 3+n] groups to add   ARGV[4+n ..] groups to remove
-- KEYS[#KEYS - 1] the thread's bodies {p:<id>}:c:body, for the post's texts kept apart (read only;
--          see lib/post_texts.lua)
-- Reply    {groups before (comma-separated), HGETALL of the post...}
-- Errors   NOTFOUND, FORBIDDEN (not the author, or a removed post), INVALID (too many groups).
-- Repeat   a second run computes the same set and leaves the version alone.
-- Revision KEYS[#KEYS] is the revision counter of the keys' aggregate; every run raises it, so
--          that a cached response that read the aggregate is known to be stale (store/revisions.go).
--!include post_texts
redis.call('INCR', KEYS[#KEYS])
local p = KEYS[1]
local author = redis.call('HGET', p, 'author')
if not author or redis.call('HGET', p, 'deleted') == '1' then
  return redis.error_reply('NOTFOUND no such post')
end
if author ~= ARGV[1] then
  return redis.error_reply('FORBIDDEN only the author can change the groups of a post')
end
if redis.call('HGET', p, 'removed') == '1' then
  -- Moving it would move it out of the reach of the moderators who removed it.
  return redis.error_reply('FORBIDDEN a moderator removed the post: its groups cannot change')
end
local before = redis.call('HGET', p, 'groups') or ''
local list, member = {}, {}
for g in string.gmatch(before, '[^,]+') do table.insert(list, g); member[g] = true end
local n = tonumber(ARGV[3])
local remove = {}
for i = 4 + n, #ARGV do remove[ARGV[i]] = true end
local out, seen = {}, {}
for _, g in ipairs(list) do
  if not remove[g] then table.insert(out, g); seen[g] = true end
end
for i = 4, 3 + n do
  local g = ARGV[i]
  if not seen[g] and not remove[g] then table.insert(out, g); seen[g] = true end
end
if #out > tonumber(ARGV[2]) then
  return redis.error_reply('INVALID a post can be in at most ' .. ARGV[2] .. ' groups')
end
local after = table.concat(out, ',')
if after ~= before then
  redis.call('HSET', p, 'groups', after)
  redis.call('HINCRBY', p, 'ver', 1)
end
local reply = post_reply(p, KEYS[#KEYS - 1])
table.insert(reply, 1, before)
return reply
