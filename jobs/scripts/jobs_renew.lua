-- jobs_renew: extend the lease of a job that is still running (jobs/jobs.go).
-- KEYS[1] zset lease   KEYS[2] hash tries (see jobs_claim)
-- ARGV[1] id   ARGV[2] the number of its claim   ARGV[3] the lease end this claim holds (ms)
-- ARGV[4] the new lease end (ms)   ARGV[5] a lease end a renewal whose reply was lost may have
--         set (ms), or ''
-- The lease moves to ARGV[4] only while this claim holds the job: the job's claim number is
-- still ARGV[2] and its lease ends at one of the times this claim set. A job whose lease ended
-- and that another claim took, or that ended, is left alone.
-- Reply   1 if the lease now ends at ARGV[4], 0 if this claim no longer holds the job.
-- Repeat  idempotent: a repeat finds the lease at ARGV[4], which it accepts.
local id, claim = ARGV[1], tonumber(ARGV[2])
local leased = redis.call('ZSCORE', KEYS[1], id)
if not leased or tonumber(redis.call('HGET', KEYS[2], id) or '0') ~= claim then
  return 0
end
leased = tonumber(leased)
if leased ~= tonumber(ARGV[3]) and leased ~= tonumber(ARGV[4])
    and not (ARGV[5] ~= '' and leased == tonumber(ARGV[5])) then
  return 0
end
-- ZREM first: Redis refuses a script's first write that may grow memory when it is full, and a
-- renewal grows nothing; refused, it would leave a job that waits for room to be claimed again.
redis.call('ZREM', KEYS[1], id)
redis.call('ZADD', KEYS[1], ARGV[4], id)
return 1
