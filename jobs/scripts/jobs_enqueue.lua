-- jobs_enqueue: add a job, or move it (jobs/jobs.go).
-- KEYS[1] zset due: job id → when it is due (ms)
-- KEYS[2] hash job: job id → "<kind>\n<argument>"
-- KEYS[3] hash tries: job id → how often it was claimed (each claim's number, matched by its outcome)
-- KEYS[4] zset lease: job id → when its lease ends (ms)
-- KEYS[5] zset dead: job id → when it was set aside (ms). A dead letter is no waiting job: a cause
--         of any mode but "cancel" queues it anew, out of the dead letters, its tries reset (as
--         jobs_dead's retry does); a cancel (ARGV[3] "0") takes it out of the dead letters.
-- KEYS[6] hash base: job id → its claims before its tries started (see jobs_claim)
-- ARGV[1] id   ARGV[2] "<kind>\n<argument>"   ARGV[3] due (ms)
-- ARGV[4] "add": a job that is already waiting keeps its time (its cause repeated, it will see
--         it); one that is running runs once more at ARGV[3] (it may have read its state before
--         the cause);
--         "move": the job is due at ARGV[3] whatever it was (a running one runs again then);
--         "earlier": as "move", but a job already waiting keeps its time if that is earlier;
--         "note": a reminder (Engine.NoteCall): as "move" when no job waits; a job that waits
--         already (another cause's reminder, or this one's sent twice) is due 1 µs after the later
--         of its time and ARGV[3], so that neither cause's Settle takes it back and it runs once
--         for both, after both;
--         "cancel": the job no longer waits (ARGV[2] unused), if ARGV[3] is "0" or the time it is
--         due at; if it is running it finishes, and its record goes when it does. A cancel is
--         refused when Redis is full, as a write that grows memory is.
-- Reply   1 if the job was added, moved or cancelled, 0 if an "add" found it there already.
-- Repeat  idempotent: the id names the job, so a repeated enqueue adds nothing.
local id = ARGV[1]
if ARGV[4] == 'cancel' then
  if ARGV[3] ~= '0' and tonumber(redis.call('ZSCORE', KEYS[1], id) or '-1') ~= tonumber(ARGV[3]) then
    return 0
  end
  -- A write Redis refuses when it is full, first (it changes nothing: the field is there): a
  -- settle sent with a write's derived steps then fails with them, and its reminder stays to
  -- redo them, instead of a ZREM that a full Redis lets through.
  if redis.call('HEXISTS', KEYS[2], id) == 1 then redis.call('HSETNX', KEYS[2], id, '') end
  redis.call('ZREM', KEYS[1], id)
  if not redis.call('ZSCORE', KEYS[4], id) then
    redis.call('HDEL', KEYS[2], id)
    redis.call('HDEL', KEYS[3], id)
    redis.call('HDEL', KEYS[6], id)
    redis.call('ZREM', KEYS[5], id)
  end
  return 1
end
local dead = redis.call('ZSCORE', KEYS[5], id)
if ARGV[4] == 'add' and not dead and redis.call('HEXISTS', KEYS[2], id) == 1
    and not (redis.call('ZSCORE', KEYS[4], id) and not redis.call('ZSCORE', KEYS[1], id)) then
  return 0
end
redis.call('HSET', KEYS[2], id, ARGV[2]) -- first: refused when Redis is full
if dead then
  redis.call('ZREM', KEYS[5], id)
  redis.call('HDEL', KEYS[3], id)
  redis.call('HDEL', KEYS[6], id)
end
if ARGV[4] == 'earlier' then
  local cur = redis.call('ZSCORE', KEYS[1], id)
  if cur and tonumber(cur) <= tonumber(ARGV[3]) then return 1 end
elseif ARGV[4] == 'note' then
  local cur = redis.call('ZSCORE', KEYS[1], id)
  if cur then
    redis.call('ZADD', KEYS[1], string.format('%.3f', math.max(tonumber(cur), tonumber(ARGV[3])) + 0.001), id)
    return 1
  end
end
redis.call('ZADD', KEYS[1], ARGV[3], id)
return 1
