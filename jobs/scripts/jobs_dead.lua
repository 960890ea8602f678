-- jobs_dead: the dead letters of one shard (jobs/jobs.go).
-- KEYS[1] zset due   KEYS[2] zset dead   KEYS[3] hash job   KEYS[4] hash tries   KEYS[5] hash why
-- KEYS[6] hash base (see jobs_claim)
-- ARGV[1] "list": ARGV[2] most. Reply {id, "<kind>\n<argument>", when (ms), error, ...}, newest first.
-- ARGV[1] "retry": ARGV[2] id, ARGV[3] now (ms). Puts the job back in the queue with its tries
--         reset. Reply 1, or 0 if it is not dead.
-- Repeat  list only reads; a repeated retry finds the job no longer dead.
if ARGV[1] == 'list' then
  local out = {}
  local dead = redis.call('ZREVRANGE', KEYS[2], 0, tonumber(ARGV[2]) - 1, 'WITHSCORES')
  for i = 1, #dead, 2 do
    local id = dead[i]
    out[#out + 1] = id
    out[#out + 1] = redis.call('HGET', KEYS[3], id) or ''
    out[#out + 1] = dead[i + 1]
    out[#out + 1] = redis.call('HGET', KEYS[5], id) or ''
  end
  return out
elseif ARGV[1] == 'retry' then
  if redis.call('ZREM', KEYS[2], ARGV[2]) == 0 then
    return 0
  end
  redis.call('HDEL', KEYS[4], ARGV[2])
  redis.call('HDEL', KEYS[6], ARGV[2])
  redis.call('ZADD', KEYS[1], ARGV[3], ARGV[2])
  return 1
end
return redis.error_reply('ERR jobs_dead: unknown operation ' .. tostring(ARGV[1]))
