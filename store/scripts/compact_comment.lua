-- compact_comment: write a comment's hash of layout 6 as layout 7 keeps it (see lib/comment_meta):
-- the times packed in m short (cmeta_pack), and no count of 0 (up, down and replies are 0 when
-- missing: creplies, comment_scores).
-- KEYS[1]  the comment's hash {p:<id>}:c:<number>
-- Reply    1 when it changed the hash, 0 when there was nothing to change (no such hash, a removal
--          marker, which has no m, or a hash of layout 7 already).
-- Writes   only KEYS[1]. A concurrent vote or reply runs before or after this script, never
--          between its read and its write, so a count it drops is 0 when dropped.
-- Repeat   a second run finds the times short and no count of 0, and changes nothing.
-- Revision KEYS[#KEYS] is the revision counter of the keys' aggregate; every run raises it, so
--          that a cached response that read the aggregate is known to be stale (store/revisions.go).
--!include comment_meta
redis.call('INCR', KEYS[#KEYS])
local h, changed = KEYS[1], 0
local m = redis.call('HGET', h, 'm')
if m and not string.find(m, '~', 1, true) then
  redis.call('HSET', h, 'm', cmeta_pack(cmeta_unpack(m)))
  changed = 1
end
local v = redis.call('HMGET', h, 'up', 'down', 'replies')
for i, f in ipairs({'up', 'down', 'replies'}) do
  if v[i] == '0' then
    redis.call('HDEL', h, f)
    changed = 1
  end
end
return changed
