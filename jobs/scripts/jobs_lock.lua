-- jobs_lock: a lock held by a token (jobs/lock.go).
-- KEYS[1] string: the holder's token, with a TTL
-- ARGV[1] token   ARGV[2] "acquire" | "renew" | "release"   ARGV[3] TTL (ms)
-- acquire  takes the lock if it is free, or renews it if this token holds it. Reply 1 or 0.
-- renew    extends the lock if this token still holds it. Reply 1, or 0 if it was lost.
-- release  frees the lock if this token holds it. Reply 1 or 0.
-- Repeat   idempotent for the same token.
local holder = redis.call('GET', KEYS[1])
if ARGV[2] == 'acquire' then
  if not holder then
    redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[3])
    return 1
  end
  if holder == ARGV[1] then
    redis.call('PEXPIRE', KEYS[1], ARGV[3])
    return 1
  end
  return 0
elseif ARGV[2] == 'renew' then
  if holder == ARGV[1] then
    redis.call('PEXPIRE', KEYS[1], ARGV[3])
    return 1
  end
  return 0
elseif ARGV[2] == 'release' then
  if holder == ARGV[1] then
    redis.call('DEL', KEYS[1])
    return 1
  end
  return 0
end
return redis.error_reply('ERR jobs_lock: unknown operation ' .. tostring(ARGV[2]))
