-- disown: take a deleted user's name off one of their posts or comments, and with erase make a
-- post a tombstone in place: title "[deleted]", no body or url (its thread keeps its shape).
-- KEYS[1]  post hash {p:<id>} or comment hash {p:<id>}:c:<number>   KEYS[2] (a post) the thread's
--          bodies {p:<id>}:c:body, which loses the post's texts kept apart (lib/post_texts.lua)
-- ARGV[1]  the deleted user's key   ARGV[2] "erase" (a post) or "anon"
-- Reply    {groups, ver} of an erased post that was live (for its unindexing), else {}.
-- Writes   only an item whose author is ARGV[1]; a deleted one is left alone.
-- Repeat   a second run finds the name gone (and the post erased) and replies {} for it.
-- Revision KEYS[#KEYS] is the revision counter of the keys' aggregate; every run raises it, so
--          that a cached response that read the aggregate is known to be stale (store/revisions.go).
--!include post_texts
--!include comment_meta
redis.call('INCR', KEYS[#KEYS])
local h = KEYS[1]
-- A packed comment (layout 6, lib/comment_meta) keeps its name in n, its author in a without one; a
-- post hash has no m.
if redis.call('HEXISTS', h, 'm') == 1 then
  if cmeta(h).author ~= ARGV[1] or redis.call('HGET', h, 'deleted') == '1' then return {} end
  cmeta_unname(h)
  return {}
end
if redis.call('HGET', h, 'author') ~= ARGV[1] or redis.call('HGET', h, 'deleted') == '1' then return {} end
redis.call('HDEL', h, 'aname')
if ARGV[2] ~= 'erase' or redis.call('HGET', h, 'erased') == '1' then return {} end
local ver = redis.call('HINCRBY', h, 'ver', 1)
redis.call('HSET', h, 'title', '[deleted]', 'erased', '1')
redis.call('HDEL', h, 'url', 'body')
drop_post_texts(KEYS[2])
return {redis.call('HGET', h, 'groups') or '', tostring(ver)}
