-- post_labels: set or clear the labels of a post (NSFW, spoiler), as its author or a moderator.
-- KEYS[1]  post hash {p:<id>}   KEYS[2] the post's moderation outbox {p:<id>}:modlog (hash
--          action key → action JSON; see moderate_post.lua)
-- ARGV[1]  the acting user key
-- ARGV[2]  via: "" when acting as the author; else the group the actor moderates among the
--          post's groups (checked again here: the post may have left it), or "*" for a site admin
-- ARGV[3]  "1" to set the NSFW label, "0" to leave it       ARGV[4] "1" labels, "" clears
-- ARGV[5]  "1" to set the spoiler label, "0" to leave it    ARGV[6] likewise
-- ARGV[7]  now (Unix ms)   ARGV[8] the post's key ("17")
-- ARGV[9]  "1" when the moderator gave a reason, else "0"   ARGV[10] the reason
-- KEYS[#KEYS - 1] the thread's bodies {p:<id>}:c:body, for the post's texts kept apart (read only;
--          see lib/post_texts.lua)
-- Reply    {outbox (HGETALL), HGETALL of the post...}
-- Errors   NOTFOUND (no post, a deleted one, or a removed one to anyone but its author and
--          moderators), FORBIDDEN (via "" and not the author; via a group the post is not in;
--          taking off a label a moderator put on, but through its group or as an admin: see
--          lib/label_keeper.lua), before any write.
-- Writes   the labels; a change raises the version, so that the derived writes that follow move
--          the post between the parts of its lists, NSFW or not (labels.go). edited stays. A
--          moderator's change (via not "") records one outbox entry per label it put on or took
--          off, LABEL_POST or UNLABEL_POST, keyed "<action>:<post>:<version after>:<label>"
--          (lower case), so that each has its own entry and id in the moderation log; and it
--          keeps its via in <label>Via for a label it puts on or confirms (lib/label_keeper.lua),
--          which goes with the label.
-- Repeat   a second run finds the labels already set and changes nothing.
-- Revision KEYS[#KEYS] is the revision counter of the keys' aggregate; every run raises it, so
--          that a cached response that read the aggregate is known to be stale (store/revisions.go).
--!include post_texts
--!include label_keeper
redis.call('INCR', KEYS[#KEYS])
local p, actor, via = KEYS[1], ARGV[1], ARGV[2]
local author = redis.call('HGET', p, 'author')
if not author or redis.call('HGET', p, 'deleted') == '1' then
  return redis.error_reply('NOTFOUND no such post')
end
if via == '' then
  if author ~= actor then
    if redis.call('HGET', p, 'removed') == '1' then return redis.error_reply('NOTFOUND no such post') end
    return redis.error_reply('FORBIDDEN only the author or a moderator of its groups can label a post')
  end
elseif via ~= '*' then
  local inVia = false
  for g in string.gmatch(redis.call('HGET', p, 'groups') or '', '[^,]+') do
    if g == via then inVia = true end
  end
  if not inVia then return redis.error_reply('FORBIDDEN the post is no longer in group ' .. via) end
end
for i, field in ipairs({'nsfw', 'spoiler'}) do
  if ARGV[1 + 2 * i] == '1' and ARGV[2 + 2 * i] ~= '1' then
    local err = label_kept(p, field, via)
    if err then return err end
  end
end
local outbox = KEYS[2]
local changes = {}
for i, field in ipairs({'nsfw', 'spoiler'}) do
  if ARGV[1 + 2 * i] == '1' and (redis.call('HGET', p, field) or '') ~= ARGV[2 + 2 * i] then
    if ARGV[2 + 2 * i] == '1' then redis.call('HSET', p, field, '1') else redis.call('HDEL', p, field, field .. 'Via') end
    table.insert(changes, {field, ARGV[2 + 2 * i] == '1'})
  end
  -- A moderator's label, put on now or confirming the author's, is kept by their group.
  if via ~= '' and ARGV[1 + 2 * i] == '1' and ARGV[2 + 2 * i] == '1' and redis.call('HEXISTS', p, field .. 'Via') == 0 then
    redis.call('HSET', p, field .. 'Via', via)
  end
end
if #changes > 0 then
  local ver = redis.call('HINCRBY', p, 'ver', 1)
  if via ~= '' then
    local first = string.match(redis.call('HGET', p, 'groups') or '', '[^,]+')
    for _, c in ipairs(changes) do
      local action = c[2] and 'LABEL_POST' or 'UNLABEL_POST'
      local rec = {a = action, m = actor, t = 'post:' .. ARGV[8], at = tonumber(ARGV[7]), l = string.upper(c[1])}
      if via ~= '*' then rec.g = via elseif first then rec.g = first end
      if ARGV[9] == '1' then rec.r = ARGV[10] end
      redis.call('HSET', outbox, string.lower(action) .. ':' .. ARGV[8] .. ':' .. ver .. ':' .. c[1], cjson.encode(rec))
    end
  end
end
local reply = post_reply(p, KEYS[#KEYS - 1])
table.insert(reply, 1, redis.call('HGETALL', outbox))
return reply
