-- create_comment: add a comment to a post's thread, or return the one an idempotency key made.
-- KEYS[1]  post hash {p:<id>}   KEYS[2] thread ids set {p:<id>}:c:ids   KEYS[3] idempotency
--          string {p:<id>}:c:idem:<digest> (not touched without a client's key)   KEYS[4] parent comment hash {p:<id>}:c:<parent>
--          (for a top-level comment {p:<id>}:c:0, which is not read)   KEYS[5..8] the parent's
--          reply orders {p:<id>}:c:<parent>:rt, :rs, :rb and :rc (time, TOP, BEST,
--          CONTROVERSIAL)   KEYS[9] the new comment's hash {p:<id>}:c:<number>   KEYS[10] the
--          thread's bodies {p:<id>}:c:body (number → text; see keys.go commentBodies)   KEYS[11] the
--          thread's live bitmap {p:<id>}:c:live (see store/readstate.go)   KEYS[12..#KEYS-1] the
--          hashes of the parent's replies, when the caller knows that this reply brings the parent
--          to replyOrdersAt (see reply_orders); otherwise none
-- ARGV[1]  number (from comment_num)   ARGV[2] parent number ("0" for a top-level comment)
-- ARGV[3]  author user key   ARGV[4] body   ARGV[5] now (Unix ms)   ARGV[6] voting closes (ms)
-- ARGV[7]  deepest depth allowed   ARGV[8] the client's idempotency key's TTL in seconds, "0"
--          for a request without one   ARGV[9] the author's
--          name, kept with the comment so that a listing need not read the author ("" when
--          unknown: the field is left out)
-- Reply    {"replies", 0} when this reply brings an unmarked parent to replyOrdersAt replies and
--          the hashes of its replies are not all among KEYS: run again with them (nothing is
--          written); else {number, HGETALL of the comment with its body}; {"again", number} when the idempotency key names an
--          earlier comment whose key is not KEYS[9]: run again with that number.
-- Errors   NOTFOUND (no post, deleted post, a removed post unless the author writes, no parent, a
--          removed parent or a deleted one out of the tree, or the key's comment was removed
--          since), FORBIDDEN (the author of a removed post), LOCKED (a locked post), INVALID (the
--          reply would nest too deep).
-- Writes   only KEYS: the comment (with pa, its announcement pending); the parent's reply orders (TOP, BEST and CONTROVERSIAL only
--          for a marked parent, built and marked by the reply that brings it to replyOrdersAt) and
--          replies; the post's comments (live comments), last activity (active) and version; the
--          ids set; the idempotency key (with a client's key). On Redis Cluster every key a script
--          touches must be among its KEYS: while a slot migrates, Redis then answers TRYAGAIN
--          until the keys are together, where a key computed inside the script could have moved
--          and stop the script halfway.
-- Repeat   a second run returns the first comment unchanged: with a client's key, the key names
--          it; without one, the comment's own number does, since comment_num gives each number
--          to one request only (a resent call finds its comment in KEYS[9]).
-- Revision KEYS[#KEYS] is the revision counter of the keys' aggregate; every run raises it, so
--          that a cached response that read the aggregate is known to be stale (store/revisions.go).
--!include comment_meta
--!include comment_scores
--!include reply_orders
redis.call('INCR', KEYS[#KEYS])
local post, num, parent = KEYS[1], ARGV[1], ARGV[2]
local postAuthor = redis.call('HGET', post, 'author')
if not postAuthor or redis.call('HGET', post, 'deleted') == '1' then
  return redis.error_reply('NOTFOUND no such post')
end
if redis.call('HGET', post, 'removed') == '1' then
  if postAuthor == ARGV[3] then return redis.error_reply('FORBIDDEN a moderator removed the post') end
  return redis.error_reply('NOTFOUND no such post')
end
if redis.call('HGET', post, 'locked') == '1' then
  return redis.error_reply('LOCKED a moderator locked the post: no new comments')
end
-- withBody returns the HGETALL of comment hash h with its body, as if it were a field of h.
local function withBody(h, num)
  local all = redis.call('HGETALL', h)
  local body = redis.call('HGET', KEYS[10], cbody(num))
  if body and redis.call('HEXISTS', h, 'body') == 0 then all[#all + 1] = 'body'; all[#all + 1] = body end
  return all
end
local keyed = ARGV[8] ~= '0'
if keyed then
  local done = redis.call('GET', KEYS[3])
  if done then
    if done ~= num then return {'again', done} end
    if not cmeta(KEYS[9]).created then
      return redis.error_reply('NOTFOUND the comment made with this idempotency key was deleted')
    end
    return {done, withBody(KEYS[9], done)}
  end
end
if redis.call('EXISTS', KEYS[9]) == 1 then
  -- With a client's key, an earlier run would have set it in the same step.
  if keyed then return redis.error_reply('comment number ' .. num .. ' is taken') end
  -- Without one, the number is this request's alone: this is its earlier run, resent.
  if not cmeta(KEYS[9]).created then
    return redis.error_reply('NOTFOUND the comment this request made was deleted')
  end
  return {num, withBody(KEYS[9], num)}
end
local depth = 0
if parent ~= '0' then
  local pd = cmeta(KEYS[4]).depth
  if not pd then return redis.error_reply('NOTFOUND no such parent comment') end
  -- A removed comment takes no replies, and a deleted one out of the tree (see delete_comment) is
  -- no longer there to reply to.
  if redis.call('HGET', KEYS[4], 'removed') == '1' or
    (redis.call('HGET', KEYS[4], 'deleted') == '1' and creplies(KEYS[4]) == 0) then
    return redis.error_reply('NOTFOUND no such parent comment')
  end
  depth = tonumber(pd) + 1
  if depth > tonumber(ARGV[7]) then
    return redis.error_reply('INVALID replies nest at most ' .. ARGV[7] .. ' levels below a top-level comment')
  end
end
-- The parent's mark: the post's hash for a top-level comment.
local markKey = parent == '0' and post or KEYS[4]
local kept, build = ordersKept(markKey), false
if not kept then
  local have = {}
  for i = 12, #KEYS - 1 do have[KEYS[i]] = true end
  local missing
  build, missing = needsBuild(KEYS[5], parent, have)
  if missing then return {'replies', 0} end
end
redis.call('HSET', KEYS[10], cbody(num), ARGV[4])
-- The comment's creation ordinal (1, 2, … in the order the comments were written) and its bit in
-- the live bitmap: read state counts the live comments past a reader's ordinal.
local ord = redis.call('HINCRBY', post, 'cord', 1)
local aname
if ARGV[9] ~= '' then aname = ARGV[9] end
cmeta_set(KEYS[9], {parent = parent, author = ARGV[3], created = ARGV[5], closes = ARGV[6], depth = depth,
  ord = ord, aname = aname})
-- The counts up, down and replies start missing (0; see creplies). pa: its announcement is
-- pending, until announce_comment.lua, which the write or else its repair runs, takes it.
redis.call('HSET', KEYS[9], 'ver', 1, 'pa', 1)
redis.call('ZADD', KEYS[5], ARGV[5], num)
if kept then
  -- No votes yet: 0 in TOP, BEST and CONTROVERSIAL alike (see comment_scores).
  redis.call('ZADD', KEYS[6], 0, num)
  redis.call('ZADD', KEYS[7], 0, num)
  redis.call('ZADD', KEYS[8], 0, num)
elseif build then
  buildOrders(KEYS[5], KEYS[6], KEYS[7], KEYS[8], parent, markKey)
end
if parent ~= '0' then redis.call('HINCRBY', KEYS[4], 'replies', 1) end
redis.call('HINCRBY', post, 'comments', 1)
redis.call('SETBIT', KEYS[11], ord, 1)
-- The post's last activity and a new version, for its ACTIVE and MOST_COMMENTS rankings.
if tonumber(ARGV[5]) > tonumber(redis.call('HGET', post, 'active') or '0') then
  redis.call('HSET', post, 'active', ARGV[5])
end
redis.call('HINCRBY', post, 'ver', 1)
redis.call('SADD', KEYS[2], string.format('%d', tonumber(num))) -- as in ids: an intset (keys.go threadIDs)
if keyed then redis.call('SET', KEYS[3], num, 'EX', ARGV[8]) end
return {num, withBody(KEYS[9], num)}
