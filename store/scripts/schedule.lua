-- schedule: a user's scheduled posts, waiting to be published (store/schedule.go).
-- KEYS[1] zset {u:<user>}:scheduled  post id → publish time (ms); members past their time expire
-- KEYS[2] hash {u:<user>}:drafts     post id → the post as JSON ({"at": "<ms>", "taken": true
--         once its publish job has begun, ...})
-- KEYS[3] zset {u:<user>}:cancelled  post id → when it was cancelled (ms): the newest ones
-- KEYS[4] the user's hash {u:<user>}
-- ARGV[1] the operation:
-- add     ARGV[2] post id  ARGV[3] draft JSON  ARGV[4] publish time (ms)  ARGV[5] now (ms)
--         ARGV[6] most pending posts. Reply: the draft; an error LIMIT when the user already
--         has that many pending; UNAUTHENTICATED, with nothing written, when the user's account
--         is deleted (checks that passed just before the deletion, whose step dropped KEYS[1] and
--         KEYS[2]: a draft written again would stay for good).
-- move    ARGV[2] post id  ARGV[3] new publish time (ms)  ARGV[4] now (ms)  ARGV[5] most
--         pending. Reply: the draft; NOTFOUND when it is not scheduled (any more).
-- cancel  ARGV[2] post id  ARGV[3] now (ms)  ARGV[4] most cancellations remembered. Reply: 1,
--         also for a post cancelled before (one of the newest ARGV[4]); NOTFOUND when it is not
--         scheduled (published, being published, or never the user's).
-- take    ARGV[2] post id  ARGV[3] now (ms). The publish job begins: reply {"take", draft},
--         {"later", publish time} when the post was moved later, or false when it is gone.
-- done    ARGV[2] post id. The post is published: its draft goes. Reply: 1.
-- Repeat   add replies with the draft it wrote; move, take and done are idempotent; a repeated
--          cancel finds the post in KEYS[3] and replies 1 again.
-- Revision KEYS[#KEYS] is the user's revision counter; every change raises it.
local op, pid = ARGV[1], ARGV[2]
-- pending counts the posts still to come, without writing: a script's first write must be one
-- that Redis refuses when it is full (see ratelimit.lua); trim drops those past their time after it.
local function pending(now)
  return redis.call('ZCOUNT', KEYS[1], '(' .. now, '+inf')
end
local function trim(now)
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
end
local raw = redis.call('HGET', KEYS[2], pid)
if op == 'add' then
  if raw then
    return raw
  end
  if redis.call('HGET', KEYS[4], 'deleted') == '1' then
    return redis.error_reply('UNAUTHENTICATED this account was deleted')
  end
  if pending(ARGV[5]) >= tonumber(ARGV[6]) then
    return redis.error_reply('LIMIT you already have ' .. ARGV[6] .. ' scheduled posts pending')
  end
  redis.call('HSET', KEYS[2], pid, ARGV[3])
  trim(ARGV[5])
  redis.call('ZADD', KEYS[1], ARGV[4], pid)
  redis.call('INCR', KEYS[#KEYS])
  return ARGV[3]
end
if op == 'done' then
  if raw then
    redis.call('HDEL', KEYS[2], pid)
    redis.call('ZREM', KEYS[1], pid)
    redis.call('INCR', KEYS[#KEYS])
  end
  return 1
end
if not raw then
  if op == 'take' then
    return false
  end
  if op == 'cancel' and redis.call('ZSCORE', KEYS[3], pid) then
    return 1
  end
  return redis.error_reply('NOTFOUND no scheduled post ' .. pid .. ' of yours: it was published or cancelled')
end
local d = cjson.decode(raw)
if op == 'take' then
  if tonumber(d.at) > tonumber(ARGV[3]) then
    return {'later', d.at}
  end
  if not d.taken then
    d.taken = true
    raw = cjson.encode(d)
    redis.call('HSET', KEYS[2], pid, raw)
    redis.call('ZREM', KEYS[1], pid)
    redis.call('INCR', KEYS[#KEYS])
  end
  return {'take', raw}
end
if d.taken then
  return redis.error_reply('NOTFOUND post ' .. pid .. ' is being published: delete it instead')
end
if op == 'move' then
  local at = redis.call('ZSCORE', KEYS[1], pid)
  if not (at and tonumber(at) > tonumber(ARGV[4])) and pending(ARGV[4]) >= tonumber(ARGV[5]) then
    return redis.error_reply('LIMIT you already have ' .. ARGV[5] .. ' scheduled posts pending')
  end
  d.at = ARGV[3]
  raw = cjson.encode(d)
  redis.call('HSET', KEYS[2], pid, raw)
  trim(ARGV[4])
  redis.call('ZADD', KEYS[1], ARGV[3], pid)
  redis.call('INCR', KEYS[#KEYS])
  return raw
elseif op == 'cancel' then
  redis.call('HDEL', KEYS[2], pid)
  redis.call('ZREM', KEYS[1], pid)
  redis.call('ZADD', KEYS[3], ARGV[3], pid)
  redis.call('ZREMRANGEBYRANK', KEYS[3], 0, -tonumber(ARGV[4]) - 1)
  redis.call('INCR', KEYS[#KEYS])
  return 1
end
return redis.error_reply('ERR schedule: unknown operation ' .. tostring(op))
