-- message_change: edit or delete a private message of the sender's.
-- KEYS[1]  the message's hash {m:<a>:<b>}:m:<id>   KEYS[2] hash {m:<a>:<b>}:last (a copy of the
--          conversation's last message)
-- ARGV[1]  "edit" | "delete"   ARGV[2] message id   ARGV[3] the user changing it   ARGV[4] with
--          "edit", the new body   ARGV[5] now (Unix ms)
-- Reply    HGETALL of the message as it is now.
-- Errors   NOTFOUND (no such message; an edit of a deleted one), FORBIDDEN (not the sender's).
-- Rules    A deleted message stays in the conversation for both sides as a tombstone: d = "1",
--          no body. The copy of the last message follows the message.
-- Repeat   a second edit writes the same body again (edited moves to the second run's time); a
--          second delete finds the tombstone and changes nothing.
-- Revision KEYS[#KEYS] is the revision counter of the keys' aggregate; every run past the checks
--          raises it, so that a cached response that read the aggregate is known to be stale
--          (store/revisions.go); a refused one writes nothing, so that made-up ids leave no key.
local msg, last, op, id, user = KEYS[1], KEYS[2], ARGV[1], ARGV[2], ARGV[3]
local from = redis.call('HGET', msg, 'f')
if not from then return redis.error_reply('NOTFOUND no such message') end
if from ~= user then return redis.error_reply('FORBIDDEN only its sender changes a message') end
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
