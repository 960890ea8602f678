-- jobs_claim: take the due jobs of one shard, each with a lease (jobs/jobs.go).
-- KEYS[1] zset due    KEYS[2] zset lease: job id → when its lease ends (ms)
-- KEYS[3] hash job    KEYS[4] hash tries: job id → its claims (each claim's number)
-- KEYS[5] hash base: job id → its claims before its tries started (absent: 0)
-- ARGV[1] now (ms)   ARGV[2] lease end (ms)   ARGV[3] most jobs to take
-- First, jobs whose lease ended (their process died or hung) are due again at once, unless
-- they were rescheduled meanwhile. Then up to ARGV[3] due jobs move from due to lease, each
-- counting one more claim, whose number its outcome names, and one more try: the claims since
-- the base (a success, or a try not counted, moves the base; the claim numbers only grow while
-- the job lives, and its outcome names the lease end too, so that an old claim's outcome, sent
-- again, never passes for a newer one's, also after the job ended and came back: jobs_done).
-- Reply   {{id, "<kind>\n<argument>", claim, try, ...}, next due (ms) or false}
-- Repeat  a repeated claim takes nothing the first one took (it is leased, not due): a claim
--         whose reply was lost leaves its jobs to run again when their lease ends.
local now, max = tonumber(ARGV[1]), tonumber(ARGV[3])
for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now, 'LIMIT', 0, max)) do
  redis.call('ZREM', KEYS[2], id)
  redis.call('ZADD', KEYS[1], 'NX', now, id)
end
local out = {}
for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, max)) do
  redis.call('ZREM', KEYS[1], id)
  local job = redis.call('HGET', KEYS[3], id)
  if job then
    redis.call('ZADD', KEYS[2], ARGV[2], id)
    out[#out + 1] = id
    out[#out + 1] = job
    local claim = redis.call('HINCRBY', KEYS[4], id, 1)
    out[#out + 1] = claim
    out[#out + 1] = claim - tonumber(redis.call('HGET', KEYS[5], id) or '0')
  end
end
local next = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')[2] or false
local lease = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')[2]
if lease and (not next or tonumber(lease) < tonumber(next)) then
  next = lease
end
return {out, next}
