-- jobs_done: what became of a claimed job (jobs/jobs.go).
-- KEYS[1] zset due   KEYS[2] zset lease   KEYS[3] hash job   KEYS[4] hash tries
-- KEYS[5] zset dead: job id → when it was set aside (ms)   KEYS[6] hash why: job id → last error
-- KEYS[7] hash base: job id → its claims before its tries started (see jobs_claim)
-- ARGV[1] id   ARGV[2] the number of its claim   ARGV[3] outcome:
--   "ok"      done: the job is gone, unless it was rescheduled while it ran; then it waits with
--             its tries counted afresh (a run that succeeded is no failed try), its claims
--             counting on.
--   "retry"   failed: due again at ARGV[4] (ms); ARGV[5] is the error.
--   "dead"    failed for the last time: set aside with ARGV[5] at ARGV[4]; ARGV[6] is the most
--             dead jobs a shard keeps (the oldest go first). One caused again while it ran is
--             no dead letter: it waits for the new cause, its tries counted afresh.
--   "later"   not yet: due again at ARGV[4], the try not counted.
--   "release" the process is stopping: due again at ARGV[4], the try not counted.
-- ARGV[7] the lease end (ms) its claim set (jobs_claim's ARGV[2]), or its last renewal
--         (jobs_renew); absent from an older process's outcome, which is then matched by the
--         claim's number alone.
-- ARGV[8] a lease end a renewal whose reply was lost may have set (ms), or '' or absent: the
--         lease may end at either.
-- Reply   1, or 0 if the job was claimed again since (its lease ended, so that claim owns it).
-- Repeat  idempotent: a repeat finds the job no longer leased with this claim, even when it was
--         claimed again meanwhile: while the job lives its claim numbers only grow, and a job that
--         ended and was caused anew, whose claims count from 1 again, has a lease of its own.
local id, claim, outcome = ARGV[1], tonumber(ARGV[2]), ARGV[3]
local leased = redis.call('ZSCORE', KEYS[2], id)
if tonumber(redis.call('HGET', KEYS[4], id) or '0') ~= claim or not leased
    or (ARGV[7] and ARGV[7] ~= '' and tonumber(leased) ~= tonumber(ARGV[7])
        and not (ARGV[8] and ARGV[8] ~= '' and tonumber(leased) == tonumber(ARGV[8]))) then
  return 0
end
redis.call('ZREM', KEYS[2], id)
local waiting = redis.call('ZSCORE', KEYS[1], id) -- rescheduled while it ran
if outcome == 'ok' then
  if waiting then
    redis.call('HSET', KEYS[7], id, claim)
  else
    redis.call('HDEL', KEYS[3], id)
    redis.call('HDEL', KEYS[4], id)
    redis.call('HDEL', KEYS[7], id)
  end
  redis.call('HDEL', KEYS[6], id)
elseif outcome == 'retry' then
  redis.call('HSET', KEYS[6], id, ARGV[5])
  redis.call('ZADD', KEYS[1], 'NX', ARGV[4], id)
elseif outcome == 'dead' then
  redis.call('HSET', KEYS[6], id, ARGV[5])
  if waiting then
    -- Caused again while it ran: no dead letter, but the new cause's job, its tries counted
    -- afresh, as a new cause of a dead letter queues it (jobs_enqueue).
    redis.call('HSET', KEYS[7], id, claim)
  else
    redis.call('ZADD', KEYS[5], ARGV[4], id)
    local over = redis.call('ZCARD', KEYS[5]) - tonumber(ARGV[6])
    if over > 0 then
      for _, old in ipairs(redis.call('ZRANGE', KEYS[5], 0, over - 1)) do
        redis.call('HDEL', KEYS[3], old)
        redis.call('HDEL', KEYS[4], old)
        redis.call('HDEL', KEYS[6], old)
        redis.call('HDEL', KEYS[7], old)
      end
      redis.call('ZREMRANGEBYRANK', KEYS[5], 0, over - 1)
    end
  end
elseif outcome == 'later' or outcome == 'release' then
  redis.call('HINCRBY', KEYS[7], id, 1) -- the try is not counted; the claim is
  redis.call('ZADD', KEYS[1], 'NX', ARGV[4], id)
else
  return redis.error_reply('ERR jobs_done: unknown outcome ' .. tostring(outcome))
end
return 1
