-- trim_comment: drop the zero counts of a comment's hash (layout 6 → 7; see lib/comment_meta,
-- creplies): up, down and replies are 0 when missing, so a field holding "0" only takes room.
-- KEYS[1]  the comment's hash {p:<id>}:c:<number>
-- Reply    1 when it dropped a field, 0 when there was none to drop (no such hash, or no count of 0).
-- Writes   only KEYS[1]. A concurrent vote or reply runs before or after this script, never
--          between its read and its write, so a count it drops is 0 when dropped.
-- Repeat   a second run finds no count of 0 and changes nothing.
-- Revision KEYS[#KEYS] is the revision counter of the keys' aggregate; every run raises it, so
--          that a cached response that read the aggregate is known to be stale (store/revisions.go).
redis.call('INCR', KEYS[#KEYS])
local h, dropped = KEYS[1], 0
local v = redis.call('HMGET', h, 'up', 'down', 'replies')
for i, f in ipairs({'up', 'down', 'replies'}) do
  if v[i] == '0' then
    redis.call('HDEL', h, f)
    dropped = 1
  end
end
return dropped
