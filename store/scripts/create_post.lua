-- create_post: write a new post hash.
-- KEYS[1]  post hash {p:<id>}   KEYS[2] the thread's bodies {p:<id>}:c:body, where the body (and a
--          title or url longer than 64 bytes) goes (see lib/post_texts.lua)
-- ARGV[1]  title  ARGV[2] body  ARGV[3] url ("" for none)  ARGV[4] author user key
-- ARGV[5]  created (Unix ms)  ARGV[6] voting closes (Unix ms)  ARGV[7] groups, comma-separated
-- ARGV[8]  nonce: a value unique to this creation (the same for every repeat of it)
-- ARGV[9]  the author's name, kept with the post so that a listing need not read the author
--          ("" when unknown: the field is left out)
-- ARGV[10] "1" to label the post NSFW   ARGV[11] "1" to label it a spoiler (see labels.go);
--          anything else leaves the label out
-- ARGV[12] another nonce that names this creation: that of the post's publication as a scheduled
--          post (a creation repeated with its idempotency key finds the post its first request
--          scheduled, once published)
-- Writes   the post with pa, its announcement pending: the write announces the post, or else
--          its repair job (repairPost), and then takes the mark (Store.announcePost).
-- Reply    HGETALL of the post, with its texts (post_reply); nil when the id already belongs to another post. That happens
--          only when the id counter lost its last increments in a failover (it lives on another
--          node than the posts on a cluster): the caller then allocates the next id.
-- Repeat   the id is allocated before the script runs, so a second run finds the hash with its
--          own nonce and replies with it unchanged.
-- Revision KEYS[#KEYS] is the revision counter of the keys' aggregate; every run raises it, so
--          that a cached response that read the aggregate is known to be stale (store/revisions.go).
--!include post_texts
redis.call('INCR', KEYS[#KEYS])
if redis.call('EXISTS', KEYS[1]) == 0 then
  redis.call('HSET', KEYS[1], 'author', ARGV[4], 'created', ARGV[5], 'closes', ARGV[6], 'groups', ARGV[7],
    'up', 0, 'down', 0, 'comments', 0, 'ver', 1, 'nonce', ARGV[8], 'pa', 1)
  set_post_text(KEYS[1], KEYS[2], 'title', ARGV[1])
  set_post_text(KEYS[1], KEYS[2], 'body', ARGV[2])
  set_post_text(KEYS[1], KEYS[2], 'url', ARGV[3])
  if ARGV[9] ~= '' then redis.call('HSET', KEYS[1], 'aname', ARGV[9]) end
  if ARGV[10] == '1' then redis.call('HSET', KEYS[1], 'nsfw', '1') end
  if ARGV[11] == '1' then redis.call('HSET', KEYS[1], 'spoiler', '1') end
else
  local nonce = redis.call('HGET', KEYS[1], 'nonce')
  if nonce ~= ARGV[8] and nonce ~= ARGV[12] then
    return false
  end
end
return post_reply(KEYS[1], KEYS[2])
