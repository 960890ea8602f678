-- persisted: register a persisted query in one shard of the bounded store (store/persisted.go).
-- KEYS[1] hash {pq:<shard>}:docs  SHA-256 → document   KEYS[2] zset {pq:<shard>}:used  SHA-256 →
--         last use (ms)
-- ARGV[1] SHA-256   ARGV[2] document   ARGV[3] now (ms)   ARGV[4] the most documents the shard
--         keeps: beyond it the least recently used go.
-- Reply   1 when the document was added, 0 when it was there already (its use is noted).
-- Repeat  a second run finds the document and only notes its use.
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then
  redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
  return 0
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
local over = redis.call('ZCARD', KEYS[2]) - tonumber(ARGV[4])
if over > 0 then
  for _, old in ipairs(redis.call('ZRANGE', KEYS[2], 0, over - 1)) do
    redis.call('HDEL', KEYS[1], old)
  end
  redis.call('ZREMRANGEBYRANK', KEYS[2], 0, over - 1)
end
return 1
