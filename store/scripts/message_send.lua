-- message_send: add a private message to a conversation, or return the one an idempotency key
-- sent.
-- KEYS[1]  conversation hash {m:<a>:<b>}   KEYS[2] zset {m:<a>:<b>}:msgs (message id → created
--          ms)   KEYS[3] the new message's hash {m:<a>:<b>}:m:<id>   KEYS[4] hash
--          {m:<a>:<b>}:last (a copy of the last message)   KEYS[5] idempotency string
--          {m:<a>:<b>}:idem:<digest>
-- ARGV[1]  message id (13 digits of created ms, then random hex)   ARGV[2] sender user key
--          ARGV[3] recipient user key   ARGV[4] body   ARGV[5] now (Unix ms): the message's
--          creation time   ARGV[6] idempotency TTL in seconds; "0" without a client's key
--          (KEYS[5] is then left alone: a resent call finds its message by id)   ARGV[7] the
--          send lease (below): "grant" for a message whose sender passed the checks of other
--          slots (limits, bans, blocks, the recipient's account) in the round trip before, or
--          "use" for one sent on the sender's lease without them   ARGV[8] with "grant", the
--          conversation's lease version (field bv) as a reply of this script read it in an earlier
--          round trip than the checks', "-" for none   ARGV[9] with "grant", until when (Unix ms)
--          the lease holds   ARGV[10] with "grant", how many messages the limits left at
--          the checks   ARGV[11] with "grant", the sender's count of messages here (c:<sender>)
--          as the reply that gave ARGV[8] read it, "-" for none   ARGV[12] the most messages the
--          recipient may have unread here (MessageOptions.MaxUnread), "0" for no bound
-- Reply    {word, x, lease, bv, sent, theirs}: bv the conversation's lease version ("" for none),
--          sent and theirs the sender's and the recipient's counts of messages here (c:<user>)
--          after the run, for the caller's next grants; lease the end (ms) of a lease this run
--          granted, "end" when the message is the last the cap allows (see Cap), or "".
--          {"ok", id, lease, ...}; {"again", id, tidy, ...} when the idempotency key
--          names an earlier message, {"full", "", tidy, ...} when the recipient has not read
--          ARGV[12] messages here (tidy: see took); {"late", position, "", ...} when the id is not past the
--          recipient's read
--          position or the last message (a sender's replica whose clock runs behind the one that
--          marked the conversation read, or sent its last message): the message, sent after them,
--          would count as read or sort before them. Nothing is written; the caller sends it again
--          with a later id. {"gate", "", "", ...} when "use" finds no lease that holds: nothing is
--          written, and the caller sends it again after the checks.
-- Lease    g:<sender> = "<until ms>:<version>:<messages left>": the sender passed the checks
--          that live in other slots, and may send that many messages until then without them
--          while the conversation's lease version (bv) is the one they were granted at. A block
--          between the two, the sender's site ban or either account's deletion raises bv
--          (message_lease.lua) after its own write, so a lease granted before it stops holding,
--          and a grant whose version was read before it is not made: the caller read that version
--          a round trip before the checks, so a change the checks missed raises it after. A lease
--          is granted only in a conversation the recipient accepted (a request's sender stays
--          checked, message by message). Every message of the sender's that grants none counts
--          against the lease that holds (one sent through another replica's checks too), and a
--          grant that replaces a lease counts the sender's messages since the caller's count
--          (ARGV[11]), so that within one conversation the limits hold exactly whichever replicas
--          grant and spend its leases. An ended lease goes with the next message's write.
-- Cap      A message that leaves ARGV[12] messages unread here grants no lease and ends the one
--          that holds, so that the next goes through the checks, which refuse it before its
--          mailbox steps (sendGate); "full" is then left to messages sent concurrently, whose
--          steps moved both lists to their time.
-- Errors   FORBIDDEN when the recipient declined the sender's requests less than the cooldown
--          ago and has not accepted the conversation since.
-- Rules    The sender accepts the conversation by writing in it (a:<sender>), and has read it up
--          to their message (r:<sender>); a reply to a pending request accepts it (q:<sender> goes). A
--          message to one who has not accepted the conversation is a request (q:<recipient>).
--          Read state is a position in the conversation: a message id, or 13 digits of ms and
--          "ffffff" for "everything sent up to that ms"; the sender has read what precedes their
--          message. The recipient's mailbox (mailbox.lua "in") applies the same rules to its own copy of
--          the state, in the same pipeline, so that both agree whatever order they run in.
-- Retry    a run whose idempotency key names an earlier message, or that finds ARGV[12] messages
--          unread, writes no message: it reads the conversation for the sender up to its id and
--          moves its activity to its time, as its mailbox steps do (see took below), and nothing
--          else.
-- Repeat   a second run finds the message (or the idempotency key) and changes nothing more.
-- Revision KEYS[#KEYS] is the revision counter of the keys' aggregate; every run raises it, so
--          that a cached response that read the aggregate is known to be stale (store/revisions.go).
redis.call('INCR', KEYS[#KEYS])
local conv, msgs, msg, last, idem = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local id, from, to, body, ms = ARGV[1], ARGV[2], ARGV[3], ARGV[4], tonumber(ARGV[5])
local keyed = ARGV[6] ~= '0'
local mode, lease = ARGV[7], 'g:' .. from
local bv = redis.call('HGET', conv, 'bv') or ''
local sent = tonumber(redis.call('HGET', conv, 'c:' .. from) or '0')
local theirs = tonumber(redis.call('HGET', conv, 'c:' .. to) or '0')
-- took makes the conversation take what the mailbox steps (mailbox.lua "out" and "in") of a
-- message this run does not write took: the sender has read up to its id, and both lists moved to
-- its time. Then the recipient's unread copy of it is all the caller takes back ("remove"),
-- whatever the number of unread messages; it returns whether that is so ("1"): the recipient's
-- lists hold the conversation already (accepted, or a request pending), or their decline refused
-- the step. Else ("") the step may have listed a declined request again, and the caller derives
-- the mailboxes.
local function took()
  if id > (redis.call('HGET', conv, 'r:' .. from) or '') then redis.call('HSET', conv, 'r:' .. from, id) end
  if ms > tonumber(redis.call('HGET', conv, 'at') or '0') then redis.call('HSET', conv, 'at', ms) end
  if redis.call('HGET', conv, 'a:' .. to) == '1' or redis.call('HGET', conv, 'q:' .. to) == '1'
    or tonumber(redis.call('HGET', conv, 'd:' .. to) or '0') > ms then
    return '1'
  end
  return ''
end
if keyed then
  local prior = redis.call('GET', idem)
  if prior == id then return {'ok', id, '', bv, sent, theirs} end -- this run, again
  if prior then return {'again', prior, took(), bv, sent, theirs} end
end
if redis.call('EXISTS', msg) == 1 then return {'ok', id, '', bv, sent, theirs} end
-- The sender's lease, while it holds: until, messages left.
local liveEnd, liveLeft
do
  local held = redis.call('HGET', conv, lease)
  if held then
    local e, v, n = string.match(held, '^(%d+):(%d*):(%d+)$')
    if e and tonumber(e) > ms and v == bv and tonumber(n) > 0 then liveEnd, liveLeft = e, tonumber(n) end
  end
end
if mode == 'use' and not liveEnd then return {'gate', '', '', bv, sent, theirs} end
local floor = redis.call('HGET', conv, 'r:' .. to) or ''
local newest = redis.call('ZRANGE', msgs, -1, -1)[1]
if newest and newest > floor then floor = newest end
if id <= floor then return {'late', floor, '', bv, sent, theirs} end
local accepted = redis.call('HGET', conv, 'a:' .. to) == '1'
if not accepted then
  local declined = tonumber(redis.call('HGET', conv, 'd:' .. to) or '0')
  if declined > ms then
    return redis.error_reply('FORBIDDEN ' .. to .. ' declined your message requests')
  end
end
-- At most ARGV[12] messages the recipient has not read: those after their read position, which
-- their own messages move past, so all the sender's (to the ms: a few sent in the ms of the
-- position are not counted).
local cap = tonumber(ARGV[12] or '0')
local atCap = false -- this message is the last the cap allows
if cap > 0 then
  local seen = redis.call('HGET', conv, 'r:' .. to)
  local unread
  if seen then
    unread = redis.call('ZCOUNT', msgs, '(' .. tonumber(string.sub(seen, 1, 13)), '+inf')
  else
    unread = redis.call('ZCARD', msgs)
  end
  if unread >= cap then return {'full', '', took(), bv, sent, theirs} end
  atCap = unread + 1 >= cap
end
if not accepted then redis.call('HSET', conv, 'q:' .. to, '1') end
redis.call('HSET', msg, 'f', from, 'b', body, 't', ms)
redis.call('ZADD', msgs, ms, id)
if redis.call('ZRANGE', msgs, -1, -1)[1] == id then
  redis.call('DEL', last)
  redis.call('HSET', last, 'id', id, 'f', from, 'b', body, 't', ms)
end
redis.call('HSET', conv, 'a:' .. from, '1')
redis.call('HDEL', conv, 'q:' .. from)
if id > (redis.call('HGET', conv, 'r:' .. from) or '') then redis.call('HSET', conv, 'r:' .. from, id) end
if ms > tonumber(redis.call('HGET', conv, 'at') or '0') then redis.call('HSET', conv, 'at', ms) end
if keyed then redis.call('SET', idem, id, 'EX', ARGV[6]) end
redis.call('HSET', conv, 'c:' .. from, sent + 1)
if atCap then
  redis.call('HDEL', conv, lease)
  return {'ok', id, 'end', bv, sent + 1, theirs}
end
-- A grant allows what the limits left at its checks, less the sender's messages here since the
-- count the caller read before them (ARGV[11]), which the checks may not have counted.
if mode == 'grant' and accepted and ARGV[8] ~= '-' and ARGV[8] == bv and ARGV[11] ~= '-' then
  local left = tonumber(ARGV[10]) - (sent - tonumber(ARGV[11]))
  if left > 0 then
    redis.call('HSET', conv, lease, ARGV[9] .. ':' .. bv .. ':' .. left)
    return {'ok', id, ARGV[9], bv, sent + 1, theirs}
  end
end
-- Else every message of the sender's, on the lease or not, counts against the lease that holds.
if liveEnd and liveLeft > 1 then
  redis.call('HSET', conv, lease, liveEnd .. ':' .. bv .. ':' .. (liveLeft - 1))
else
  redis.call('HDEL', conv, lease)
end
return {'ok', id, '', bv, sent + 1, theirs}
