-- message_change: edit or delete a private message of the sender's.
-- KEYS[1]  the message's hash {m:<a>:<b>}:m:<id>   KEYS[2] hash {m:<a>:<b>}:last (a copy of the
--          conversation's last message)   KEYS[3] the conversation's hash {m:<a>:<b>}
-- ARGV[1]  "edit" | "delete"   ARGV[2] message id   ARGV[3] the user changing it   ARGV[4] with
--          "edit", the new body   ARGV[5] now (Unix ms)   ARGV[6] the other participant
-- Reply    HGETALL of the message as it is now.
-- Errors   NOTFOUND (no such message; an edit of a deleted one), FORBIDDEN (not the sender's; an
--          edit of a message of a request the other declined).
-- Rules    A deleted message stays in the conversation for both sides as a tombstone: d = "1",
--          no body. The copy of the last message follows the message. A request the recipient
--          declined is gone for them: its messages (those up to x:<recipient>, the last one it
--          held, which message_state.lua "decline" keeps; up to r:<recipient> for a decline made
--          before x: was kept, which read them all) can no longer be edited, until the recipient
--          accepts the conversation; deleting them stays open (it takes their text away).
-- Repeat   a second edit writes the same body again (edited moves to the second run's time); a
--          second delete finds the tombstone and changes nothing.
-- Revision KEYS[#KEYS] is the revision counter of the keys' aggregate; every run past the checks
--          raises it, so that a cached response that read the aggregate is known to be stale
--          (store/revisions.go); a refused one writes nothing, so that made-up ids leave no key.
local msg, last, op, id, user = KEYS[1], KEYS[2], ARGV[1], ARGV[2], ARGV[3]
local from = redis.call('HGET', msg, 'f')
if not from then return redis.error_reply('NOTFOUND no such message') end
if from ~= user then return redis.error_reply('FORBIDDEN only its sender changes a message') end
if op == 'edit' then
  local conv, to = KEYS[3], ARGV[6]
  if redis.call('HGET', conv, 'a:' .. to) ~= '1' then
    local cut = redis.call('HGET', conv, 'x:' .. to)
    if not cut and redis.call('HEXISTS', conv, 'd:' .. to) == 1 then cut = redis.call('HGET', conv, 'r:' .. to) end
    if cut and id <= cut then
      return redis.error_reply('FORBIDDEN ' .. to .. ' declined your message request: its messages can no longer be edited')
    end
  end
end
redis.call('INCR', KEYS[#KEYS])
local isLast = redis.call('HGET', last, 'id') == id
if op == 'edit' then
  if redis.call('HGET', msg, 'd') == '1' then return redis.error_reply('NOTFOUND the message was deleted') end
  redis.call('HSET', msg, 'b', ARGV[4], 'e', ARGV[5])
  if isLast then redis.call('HSET', last, 'b', ARGV[4], 'e', ARGV[5]) end
elseif redis.call('HGET', msg, 'd') ~= '1' then
  redis.call('HDEL', msg, 'b')
  redis.call('HSET', msg, 'd', '1')
  if isLast then
    redis.call('HDEL', last, 'b')
    redis.call('HSET', last, 'd', '1')
  end
end
return redis.call('HGETALL', msg)
