-- legacy_notes: read notifications of one inbox, or its unread count, whichever layout the inbox
-- is of — 6, its read state in its records and count (lib/inbox_unread.lua), or 5, its unread
-- ids in a sorted set — in one step, so that a read beside the migration from layout 6 (which
-- folds one into the other) sees either shape whole. A process that found the keyspace of layout
-- 5 reads inboxes with it until it has migrated the keyspace (Store.legacyUnread).
-- KEYS[1]  hash {n:<user>}:notes   KEYS[2] zset {n:<user>}:unread, of an inbox of layout 6
-- ARGV[1]  "count" | "notes"   ARGV[2..] with "notes", notification ids
-- Reply    with "count", the number of unread notifications; with "notes", {records, unread}: each
--          id's record (nil when none) and whether it is unread (1 or 0).
-- Read-only.
--!include inbox_unread
local notes, legacy = KEYS[1], KEYS[2]
local old = legacy_inbox(notes, legacy)
if ARGV[1] == 'count' then
  if old then return redis.call('ZCARD', legacy) end
  return tonumber(redis.call('HGET', notes, '#u') or 0)
end
local recs, unread = {}, {}
for i = 2, #ARGV do
  local rec = redis.call('HGET', notes, ARGV[i])
  recs[i - 1] = rec
  local u
  if old then u = redis.call('ZSCORE', legacy, ARGV[i]) ~= false else u = is_unread(rec) end
  if u then unread[i - 1] = 1 else unread[i - 1] = 0 end
end
return {recs, unread}
