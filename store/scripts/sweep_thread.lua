-- sweep_thread: drop the comment keys of a deleted post's thread, a bounded number per run, so
-- that deleting a post with a huge thread never blocks Redis for long.
-- KEYS[1]  post hash {p:<id>}   KEYS[2] thread ids set {p:<id>}:c:ids
-- ARGV[1]  thread key prefix {p:<id>}:c:   ARGV[2] most comments to drop in this run
-- Reply    how many comments are left to drop; -1 when the post is live (nothing is dropped).
-- Writes   each dropped comment's hash, votes and reply indexes, derived from ARGV[1].
-- Repeat   each run drops what is left; a run on an empty set does nothing.
if redis.call('EXISTS', KEYS[1]) == 1 and redis.call('HGET', KEYS[1], 'deleted') ~= '1' then
  return -1
end
local nums = redis.call('SPOP', KEYS[2], ARGV[2])
for _, num in ipairs(nums) do
  local key = ARGV[1] .. num
  redis.call('UNLINK', key, key .. ':votes', key .. ':rt', key .. ':rs')
end
return redis.call('SCARD', KEYS[2])
