-- mailbox: apply one step of a conversation to one participant's mailbox, the lists and unread
-- messages derived from the conversations (see store/messages.go).
-- KEYS[1]  zset {mb:<u>}:convs (other user → last activity ms)   KEYS[2] zset {mb:<u>}:reqs (the
--          same for pending requests)   KEYS[3] zset {mb:<u>}:unread and KEYS[4] zset
--          {mb:<u>}:runread (scores 0, members "<other>:<message id>": the unread messages of
--          accepted conversations and of pending requests)   KEYS[5] hash {mb:<u>}:state, other user →
--          "<a> <d> <r>": u's a:, d: and r: in the conversation with them, as it keeps them ("0"
--          for none), one short field per conversation so that the hash stays small   KEYS[6] hash
--          {mb:<u>}:ver, other user → the version of what the mailbox holds of the conversation
--          with them, which every step that changes it raises (see sync)   KEYS[7] string
--          {mb:<u>}:gone, set when u's account was deleted: every step then does nothing, and
--          replies 0 ({-1, ""} for read, -3 for out), so that a conversation's write in flight, or
--          one on a send lease granted before the deletion, makes none of the keys it dropped
--          again; out's -3 tells the sender's message that it landed after the deletion, whose
--          chain may not find it (see sendOnce)
-- ARGV[1]  the step   ARGV[2] the other user   ARGV[3..] the step's arguments:
--          out ID MS       u sent message ID at MS: u accepts the conversation (a reply accepts a
--                          request) and has read what precedes ID
--          in ID MS        the other sent message ID at MS: unread unless u has read the
--                          conversation past ID already; a request unless u accepted; nothing
--                          while u's decline lasts (as message_send.lua refuses it)
--          read P [UPTO]   u read the conversation up to the position P, or up to the last
--                          message of the other's the mailbox holds when that is later (sent by a
--                          replica whose clock is ahead: see message_state.lua), and no further
--                          than UPTO when given (the newest message u has seen) — a position short
--                          of the conversation's (a message whose step is on its way here), the
--                          caller derives the mailbox again; nothing, and the reply
--                          -1, when the mailbox knows no conversation with the other (no state,
--                          in neither list): one that does not exist, or whose first message's
--                          step has not arrived (the caller then derives the mailbox again), or
--                          when it holds no version of it: every step that writes the mailbox
--                          gives it one, so one without is a mailbox its account's deletion
--                          dropped (its list of conversations stays until the deletion's chain
--                          has been through them), or one written before versions were kept,
--                          which the caller's derivation gives one
--          accept          u accepts the request: its unread messages count, it moves to convs
--          decline P UNTIL u declines the request, having read up to P, or up to the last
--                          message of the other's the mailbox holds when that is later (the
--                          request held it: see message_state.lua): requests are refused
--                          until UNTIL (ms)
--          Read positions are message ids, or 13 digits of ms and "ffffff" (everything sent up to
--          that ms), compared as strings.
--          remove ID [X]   message ID is deleted: it is no longer unread. With X, ID is a message
--                          the conversation did not write (a retry, or one past the unread cap:
--                          message_send.lua), whose steps the mailbox took: the reply is -3 when
--                          u's read position is ID, which a read or a decline took from its
--                          unread copy (latest) and the conversation's is short of, so that the
--                          caller derives the mailbox again
--          sync A D R LIST AT V ID...  the conversation as it is (the repair): a:, d:, r: (""
--                          or 0 for none; R a read position), LIST "c" (accepted), "r" (a pending request) or "-"
--                          (neither), the last activity AT, and the ids of u's unread messages,
--                          as the caller read them after reading the conversation's version V in
--                          KEYS[6] ("" for none). Unlike the other steps it replaces what the
--                          mailbox holds, so it applies only while the version is still V:
--                          otherwise a step changed the mailbox since the caller read, and the
--                          caller's copy of the conversation may lack that step's write; it then
--                          writes nothing and replies -2 (the caller reads again). The version
--                          it leaves ends in "s", so that the same sync run again (a pipeline
--                          resent after its replies were lost) knows itself and does nothing more.
-- Reply    the number of u's unread messages in accepted conversations (-2: see sync; -3 for out:
--          see KEYS[7], for remove: see remove); for read, {that number, u's read position after
--          it}, or {-1, ""} (see read).
-- Rules    Every step but sync commutes with every other one a conversation's writes make
--          concurrently (the unread sets are sets, read times only move forward, activity only
--          moves forward), so that the mailbox and the conversation agree whatever order their
--          steps reach them in; the unread count is the size of KEYS[3], exact by construction.
-- Repeat   every step is idempotent (sync: see there).
-- Revision KEYS[#KEYS] is the revision counter of the keys' aggregate; every run that may change
--          the mailbox raises it (read and remove only when they do: a read the mailbox knows
--          nothing of, or a remove of a message it does not hold, a deletion's step for a made-up
--          id, writes no key), so that a cached response that read the aggregate is known to be
--          stale (store/revisions.go).
local convs, reqs, unread, runread, state, ver = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local step, o = ARGV[1], ARGV[2]
if redis.call('EXISTS', KEYS[7]) == 1 then
  if step == 'read' then return {-1, ''} end
  if step == 'out' then return -3 end
  return 0
end
local version = redis.call('HGET', ver, o) or ''
local function after(v) return tostring(tonumber(string.match(v, '^%d+') or '0') + 1) end
if step == 'sync' and version ~= ARGV[8] then
  if version == after(ARGV[8]) .. 's' then return redis.call('ZCARD', unread) end -- this sync, again
  return -2
end
-- changed notes that the step changes the mailbox: the revision and the version move.
local function changed()
  redis.call('INCR', KEYS[#KEYS])
  if step == 'sync' then
    redis.call('HSET', ver, o, after(version) .. 's')
  else
    redis.call('HSET', ver, o, after(version))
  end
end
if step ~= 'read' and step ~= 'remove' then changed() end
local lo, hi = '[' .. o .. ':', '(' .. o .. ';'
local st = {'0', '0', '0'} -- a, d, r
local stated = false -- the state hash has an entry for o
do
  local packed = redis.call('HGET', state, o)
  if packed then
    stated = true
    local i = 1
    for part in string.gmatch(packed, '%S+') do st[i] = part; i = i + 1 end
  end
end
local function save() redis.call('HSET', state, o, st[1] .. ' ' .. st[2] .. ' ' .. st[3]) end
local function accepted() return st[1] == '1' end
local function declinedUntil() return tonumber(st[2]) or 0 end
local function readPos() if st[3] == '0' then return '' end return st[3] end
local function readTo(p)
  local r = readPos()
  if p > r then
    st[3] = p
    r = p
  end
  redis.call('ZREMRANGEBYLEX', unread, lo, '[' .. o .. ':' .. r)
  redis.call('ZREMRANGEBYLEX', runread, lo, '[' .. o .. ':' .. r)
end
-- latest is the later of the position p and the other's last message the mailbox holds unread.
local function latest(p)
  for _, set in ipairs({runread, unread}) do
    local top = redis.call('ZREVRANGEBYLEX', set, hi, lo, 'LIMIT', 0, 1)[1]
    if top and string.sub(top, #o + 2) > p then p = string.sub(top, #o + 2) end
  end
  return p
end
local function move(from, to)
  local members = redis.call('ZRANGEBYLEX', from, lo, hi)
  for i = 1, #members, 500 do
    local args = {}
    for j = i, math.min(i + 499, #members) do
      args[#args + 1] = 0
      args[#args + 1] = members[j]
    end
    redis.call('ZADD', to, unpack(args))
  end
  redis.call('ZREMRANGEBYLEX', from, lo, hi)
end
local function toConvs()
  local at = redis.call('ZSCORE', reqs, o)
  if at then
    redis.call('ZREM', reqs, o)
    redis.call('ZADD', convs, 'GT', at, o)
  end
  move(runread, unread)
end
if step == 'out' then
  local id, ms = ARGV[3], tonumber(ARGV[4])
  st[1] = '1'
  toConvs()
  readTo(id)
  redis.call('ZADD', convs, 'GT', ms, o)
  save()
elseif step == 'in' then
  local id, ms = ARGV[3], tonumber(ARGV[4])
  if accepted() or declinedUntil() <= ms then
    local set, list = unread, convs
    if not accepted() then set, list = runread, reqs end
    if id > readPos() then redis.call('ZADD', set, 0, o .. ':' .. id) end
    redis.call('ZADD', list, 'GT', ms, o)
  end
elseif step == 'read' then
  if version == '' or (not stated and not redis.call('ZSCORE', convs, o) and not redis.call('ZSCORE', reqs, o)) then
    return {-1, ''}
  end
  changed()
  local p = latest(ARGV[3])
  if ARGV[4] and ARGV[4] ~= '' and ARGV[4] < p then p = ARGV[4] end
  readTo(p)
  save()
  return {redis.call('ZCARD', unread), readPos()}
elseif step == 'accept' then
  st[1], st[2] = '1', '0'
  toConvs()
  save()
elseif step == 'decline' then
  if not accepted() then
    st[2] = ARGV[4]
    redis.call('ZREM', reqs, o)
    readTo(latest(ARGV[3]))
    save()
  end
elseif step == 'remove' then
  local n = redis.call('ZREM', unread, o .. ':' .. ARGV[3]) + redis.call('ZREM', runread, o .. ':' .. ARGV[3])
  if n > 0 then changed() end
  if ARGV[4] and readPos() == ARGV[3] then return -3 end
elseif step == 'sync' then
  local a, d, r, list, at = ARGV[3], tonumber(ARGV[4]) or 0, ARGV[5], ARGV[6], ARGV[7]
  st[1], st[2], st[3] = '0', tostring(d), '0'
  if a == '1' then st[1] = '1' end
  if r ~= '' then st[3] = r end
  save()
  redis.call('ZREMRANGEBYLEX', unread, lo, hi)
  redis.call('ZREMRANGEBYLEX', runread, lo, hi)
  redis.call('ZREM', convs, o)
  redis.call('ZREM', reqs, o)
  local set = nil
  if list == 'c' then
    redis.call('ZADD', convs, at, o)
    set = unread
  elseif list == 'r' then
    redis.call('ZADD', reqs, at, o)
    set = runread
  end
  if set then
    for i = 9, #ARGV do redis.call('ZADD', set, 0, o .. ':' .. ARGV[i]) end
  end
else
  return redis.error_reply('INVALID unknown mailbox step ' .. step)
end
return redis.call('ZCARD', unread)
