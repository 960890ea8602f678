-- message_state: one participant marks a conversation read, or accepts or declines the other's
-- message request.
-- KEYS[1]  conversation hash {m:<a>:<b>}   KEYS[2] zset {m:<a>:<b>}:msgs (message id → created ms)
-- ARGV[1]  "read" | "accept" | "decline"   ARGV[2] the participant's user key   ARGV[3] the read
--          position of now (13 digits of Unix ms and "ffffff": every message sent up to now)
--          ARGV[4] with "decline", until when (ms) the other's requests are refused; with "read",
--          the newest message id the participant has seen ("" for none: read everything)
-- Reply    1 when the conversation exists, 0 when it does not (a "read" of it then writes nothing,
--          not even the revision, so that reading conversations that do not exist leaves no key);
--          for a "read", {1, the participant's read position after it} or {0, ""}, so that the
--          caller knows whether the mailbox's step read as far (see mailbox.lua "read").
-- Errors   NOTFOUND (accept or decline with no request pending), INVALID (decline an accepted
--          conversation).
-- Rules    read: the participant has read it up to now, or up to the conversation's last message
--          when that is later (sent by a replica whose clock is ahead: the participant has seen
--          it), and no further than ARGV[4] when given (r:<u>, a position compared as a string,
--          never moving back). accept: a:<u>,
--          the request and any decline go. decline: the request goes, d:<u> refuses the other's
--          requests until ARGV[4], x:<u> keeps the last message the request held (its messages
--          can no longer be edited: message_change.lua), and what they sent counts as read: up to now, or up to the
--          conversation's last message when that is later (sent by a replica whose clock is ahead,
--          or while the decline was in flight: the request held it). The participant's mailbox
--          (mailbox.lua) applies the same step to its copy in the same pipeline.
-- Repeat   read keeps the later time; accept of an accepted conversation and a decline repeated
--          with the same end change nothing.
-- Revision KEYS[#KEYS] is the revision counter of the keys' aggregate; every run on a conversation
--          that exists raises it, so that a cached response that read the aggregate is known to be
--          stale (store/revisions.go).
local conv, op, u, now = KEYS[1], ARGV[1], ARGV[2], ARGV[3]
if redis.call('EXISTS', conv) == 0 then
  if op == 'read' then return {0, ''} end
  return redis.error_reply('NOTFOUND no message request from this user')
end
redis.call('INCR', KEYS[#KEYS])
local function readTo(t)
  if t > (redis.call('HGET', conv, 'r:' .. u) or '') then redis.call('HSET', conv, 'r:' .. u, t) end
end
-- latest is the later of now and the conversation's last message: every message held.
local function latest()
  local last = redis.call('ZRANGE', KEYS[2], -1, -1)[1]
  if last and last > now then return last end
  return now
end
if op == 'read' then
  local p = latest()
  if ARGV[4] and ARGV[4] ~= '' and ARGV[4] < p then p = ARGV[4] end
  readTo(p)
  return {1, redis.call('HGET', conv, 'r:' .. u) or ''}
elseif op == 'accept' then
  if redis.call('HGET', conv, 'a:' .. u) ~= '1' then
    if redis.call('HGET', conv, 'q:' .. u) ~= '1' then return redis.error_reply('NOTFOUND no message request from this user') end
    redis.call('HSET', conv, 'a:' .. u, '1')
    redis.call('HDEL', conv, 'q:' .. u, 'd:' .. u, 'x:' .. u)
  end
elseif op == 'decline' then
  if redis.call('HGET', conv, 'a:' .. u) == '1' then return redis.error_reply('INVALID the conversation is accepted: block the user instead') end
  if redis.call('HGET', conv, 'q:' .. u) ~= '1' then
    if redis.call('HGET', conv, 'd:' .. u) == ARGV[4] then return 1 end
    return redis.error_reply('NOTFOUND no message request from this user')
  end
  redis.call('HDEL', conv, 'q:' .. u)
  redis.call('HSET', conv, 'd:' .. u, ARGV[4])
  readTo(latest())
  -- x:<u>, the last message the declined request held: its messages can no longer be edited
  -- (message_change.lua).
  local last = redis.call('ZRANGE', KEYS[2], -1, -1)[1]
  if last and last > (redis.call('HGET', conv, 'x:' .. u) or '') then redis.call('HSET', conv, 'x:' .. u, last) end
end
return 1
