-- comment_num: allocate the next comment number of a post's thread.
-- KEYS[1]  post hash {p:<id>}
-- Reply    the number, 12 digits ("000000000004").
-- Errors   NOTFOUND (no post, or a deleted one).
-- Repeat   a second run allocates another number; a number never used leaves a harmless gap.
-- The number is allocated before create_comment runs so that create_comment can name the new
-- comment's key in its KEYS: on Redis Cluster a script must declare every key it touches, or a
-- slot migration can stop it halfway (see create_comment).
-- Revision KEYS[#KEYS] is the revision counter of the keys' aggregate; every run raises it, so
--          that a cached response that read the aggregate is known to be stale (store/revisions.go).
redis.call('INCR', KEYS[#KEYS])
if not redis.call('HGET', KEYS[1], 'author') or redis.call('HGET', KEYS[1], 'deleted') == '1' then
  return redis.error_reply('NOTFOUND no such post')
end
return string.format('%012d', redis.call('HINCRBY', KEYS[1], 'cseq', 1))
