-- moderate_comment: a moderator removes or restores a comment, and records the action in the
-- post's moderation outbox, from which the caller writes it into the moderation log.
-- A comment is in its parent's reply indexes (and counts in its parent's replies) while it is
-- live or has replies there; a deleted or removed comment without any is out of them. So a
-- removed comment with replies stays in the thread as a tombstone, and one without leaves it —
-- and so does each tombstoned ancestor this leaves without replies. Nothing is dropped: a
-- comment out of the indexes keeps its hash, and its parent counts it in held, so that the
-- comment (with its ancestors) comes back in its place on restore and no deletion drops a parent
-- that holds one (see delete_comment).
-- KEYS[1]  post hash {p:<id>}   KEYS[2] the post's moderation outbox {p:<id>}:modlog
-- KEYS[3..] five keys per comment of the chain ARGV[8..]: its hash {p:<id>}:c:<n> and its reply
--          orders :rt, :rs, :rb and :rc (for "0", the post's top-level orders; its hash is not
--          used); then, when the caller knows that a restore brings an unmarked parent to
--          replyOrdersAt replies (see reply_orders), the hashes of that parent's replies;
--          KEYS[#KEYS - 2] the thread's bodies {p:<id>}:c:body (read only); KEYS[#KEYS - 1]
--          the thread's live bitmap {p:<id>}:c:live, whose bit of the comment (ord) follows the
--          live count
-- ARGV[1]  REMOVE_COMMENT | RESTORE_COMMENT   ARGV[2] the moderator's user key   ARGV[3] via:
--          the group the moderator's authority comes through, or "*" for a site admin
-- ARGV[4]  "1" when a reason is given, else "0"   ARGV[5] the reason   ARGV[6] now (Unix ms)
-- ARGV[7]  the post's key   ARGV[8..] the chain: the comment's number, its parent's, and so on
--          up to the first ancestor whose place does not change, or "0" (the caller reads it
--          beforehand; parents never change)
-- Reply    {"replies", parent number} when a restore brings an unmarked parent to replyOrdersAt
--          replies and the hashes of its replies are not all among KEYS: run again with them;
--          else {changed (0|1), outbox (HGETALL), HGETALL of the comment with its body...}; {"again"} when the chain
--          is too short (an ancestor's replies changed since it was read): read it again.
-- Errors   NOTFOUND (no post, a deleted post, no comment, a deleted comment), FORBIDDEN (via is
--          a group the post is no longer in; or a restore through another group than the
--          removal's).
-- Writes   only KEYS (see create_comment for why); it reads everything before its first write,
--          so "again" leaves no trace. The post's comments (live count) moves by one. The
--          comment's removedVia keeps the via of its removal: only that group's moderators and
--          the admins restore it, so that a moderator of another of its post's groups cannot.
-- Repeat   a second run finds the state already set and changes nothing; it still replies with
--          the outbox, so that its caller logs what an earlier run left unlogged.
-- Revision KEYS[#KEYS] is the revision counter of the keys' aggregate; every run raises it, so
--          that a cached response that read the aggregate is known to be stale (store/revisions.go).
--!include comment_scores
--!include reply_orders
--!include comment_meta
redis.call('INCR', KEYS[#KEYS])
local post, outbox = KEYS[1], KEYS[2]
local action, actor, via = ARGV[1], ARGV[2], ARGV[3]
local chain = {}
for i = 8, #ARGV do chain[#chain + 1] = ARGV[i] end
local function key(i, part) -- part 0 hash, 1..4 the reply orders of chain[i]
  return KEYS[3 + 5 * (i - 1) + part]
end
if not redis.call('HGET', post, 'author') or redis.call('HGET', post, 'deleted') == '1' then
  return redis.error_reply('NOTFOUND no such post')
end
local groups = redis.call('HGET', post, 'groups') or ''
local first = nil
local inVia = false
for g in string.gmatch(groups, '[^,]+') do
  if not first then first = g end
  if g == via then inVia = true end
end
if via ~= '*' and not inVia then
  return redis.error_reply('FORBIDDEN the post is no longer in group ' .. via)
end
local c = key(1, 0)
if not cmeta(c).created then return redis.error_reply('NOTFOUND no such comment') end
if redis.call('HGET', c, 'deleted') == '1' then return redis.error_reply('NOTFOUND the comment was deleted') end
local remove = action == 'REMOVE_COMMENT'
if not remove and action ~= 'RESTORE_COMMENT' then return redis.error_reply('INVALID unknown action ' .. action) end
local by = redis.call('HGET', c, 'removedVia')
if not remove and via ~= '*' and by and by ~= via and redis.call('HGET', c, 'removed') == '1' then
  if by == '*' then return redis.error_reply('FORBIDDEN a site admin removed it: only the site admins may restore it') end
  return redis.error_reply('FORBIDDEN it was removed in group ' .. by .. ': only its moderators and the site admins may restore it')
end
local changed = 0
if (redis.call('HGET', c, 'removed') == '1') ~= remove then
  -- How far the change of place reaches, reading only: chain[1..n] leave (or re-enter) their
  -- parents' indexes.
  local n = 0
  if creplies(c) == 0 then
    n = 1
    while true do
      local parent = cmeta(key(n, 0)).parent
      if chain[n + 1] ~= parent then return {'again'} end
      if parent == '0' then break end
      local pk = key(n + 1, 0)
      local tomb = redis.call('HGET', pk, 'deleted') == '1' or redis.call('HGET', pk, 'removed') == '1'
      local r = creplies(pk)
      -- A tombstone leaves with its last reply and comes back with its first.
      if not tomb or (remove and r ~= 1) or (not remove and r ~= 0) then break end
      n = n + 1
    end
  end
  -- A restore into a parent that keeps its orders adds the comment to them; one that brings an
  -- unmarked parent to replyOrdersAt replies builds them (see reply_orders).
  local kept, build = {}, {}
  if not remove then
    local have = {}
    for i = 3 + 5 * #chain, #KEYS - 3 do have[KEYS[i]] = true end
    for i = 1, n do
      local parent = chain[i + 1]
      local markKey = parent == '0' and post or key(i + 1, 0)
      kept[i] = ordersKept(markKey)
      if not kept[i] then
        local missing
        build[i], missing = needsBuild(key(i + 1, 1), parent, have)
        if missing then return {'replies', parent} end
      end
    end
  end
  local ver
  if remove then
    redis.call('HSET', c, 'removed', '1', 'removedVia', via)
  else
    redis.call('HDEL', c, 'removed', 'removedVia')
  end
  ver = redis.call('HINCRBY', c, 'ver', 1)
  redis.call('HINCRBY', post, 'comments', remove and -1 or 1)
  local ord = cmeta(c).ord
  if ord then redis.call('SETBIT', KEYS[#KEYS - 1], ord, remove and 0 or 1) end
  if remove and tonumber(redis.call('HGET', post, 'comments') or '0') <= 0 then
    redis.call('UNLINK', KEYS[#KEYS - 1]) -- no live comment: no bit set
  end
  redis.call('HINCRBY', post, 'ver', 1) -- its MOST_COMMENTS ranking moves
  for i = 1, n do
    local num, parent, h = chain[i], chain[i + 1], key(i, 0)
    if remove then
      for part = 1, 4 do redis.call('ZREM', key(i + 1, part), num) end
    else
      redis.call('ZADD', key(i + 1, 1), cmeta(h).created, num)
      if kept[i] then
        local net, best, con = commentScores(h)
        redis.call('ZADD', key(i + 1, 2), net, num)
        redis.call('ZADD', key(i + 1, 3), best, num)
        redis.call('ZADD', key(i + 1, 4), con, num)
      elseif build[i] then
        buildOrders(key(i + 1, 1), key(i + 1, 2), key(i + 1, 3), key(i + 1, 4), parent, parent == '0' and post or key(i + 1, 0))
      end
    end
    if parent ~= '0' then
      local d = remove and 1 or -1
      redis.call('HINCRBY', key(i + 1, 0), 'replies', -d)
      redis.call('HINCRBY', key(i + 1, 0), 'held', d)
    end
  end
  local short = string.format('%d', tonumber(chain[1]))
  local rec = {a = action, m = actor, t = 'comment:' .. ARGV[7] .. ':' .. short, at = tonumber(ARGV[6])}
  if via ~= '*' then rec.g = via elseif first then rec.g = first end
  if ARGV[4] == '1' then rec.r = ARGV[5] end
  redis.call('HSET', outbox, string.lower(action) .. ':' .. ARGV[7] .. ':' .. short .. ':' .. ver, cjson.encode(rec))
  changed = 1
end
local reply = redis.call('HGETALL', c)
local body = redis.call('HGET', KEYS[#KEYS - 2], cbody(chain[1]))
if body and redis.call('HEXISTS', c, 'body') == 0 then reply[#reply + 1] = 'body'; reply[#reply + 1] = body end
table.insert(reply, 1, redis.call('HGETALL', outbox))
table.insert(reply, 1, changed)
return reply
