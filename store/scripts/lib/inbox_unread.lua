-- inbox_unread: the read state of an inbox's notifications (layout 7; see notifications.go). A
-- notification's record says it: its kind's letter in lower case while it is unread ("r…"), in
-- upper case once read ("R…"; layout 4's JSON records, "{…", read as read). The field '#u' of the
-- inbox's hash counts the unread records (no notification id starts with '#'). Layout 6 kept the
-- unread ids in a sorted set of their own ({n:<user>}:unread), and its records in upper case: an
-- inbox is still of layout 6 while that set exists and the hash has no '#u' (legacy_inbox), until
-- the migration from layout 6 folds the set into the records (fold_inbox.lua). Scripts that
-- change an inbox's read state include it ("--!include inbox_unread").

-- is_unread says whether a stored record is unread: its first byte a lower-case letter.
local function is_unread(rec)
  if not rec then return false end
  local b = string.byte(rec, 1)
  return b ~= nil and b >= 97 and b <= 122
end

-- as_unread and as_read return a record with its read state set.
local function as_unread(rec) return string.lower(string.sub(rec, 1, 1)) .. string.sub(rec, 2) end
local function as_read(rec) return string.upper(string.sub(rec, 1, 1)) .. string.sub(rec, 2) end

-- legacy_inbox says whether the inbox of hash notes is still of layout 6: its unread ids in the
-- sorted set legacy, and no count in the hash.
local function legacy_inbox(notes, legacy)
  return redis.call('HEXISTS', notes, '#u') == 0 and redis.call('EXISTS', legacy) == 1
end
