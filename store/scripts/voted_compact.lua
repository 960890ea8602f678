-- voted_compact: replace the head of a user's vote log with its compacted form (votes_log.go).
-- KEYS[1]  string {u:<name>}:voted (the log)   KEYS[2] string {u:<name>}:voted:n (how many
--          compactions the log has had)   KEYS[3] the user hash {u:<name>}
-- ARGV[1]  the length of the head that was read (bytes; it ends with an entry's comma)
-- ARGV[2]  the compaction count read with it   ARGV[3] the head's compacted form
-- Reply    the log's length after the run; -1 when nothing was written: the account is deleted
--          (its deletion walks the log by offset), or another compaction ran since the head was
--          read (its count moved), or the log is shorter than the head.
-- Writes   the compacted head, then the log's bytes past the head as they are (the entries
--          appended since it was read), and the count, raised by one.
-- Repeat   a second run finds the count raised and writes nothing.
-- Revision KEYS[#KEYS] is the revision counter of the keys' aggregate; every run raises it, so
--          that a cached response that read the aggregate is known to be stale (store/revisions.go).
redis.call('INCR', KEYS[#KEYS])
if redis.call('HGET', KEYS[3], 'deleted') == '1' then return -1 end
if (redis.call('GET', KEYS[2]) or '0') ~= ARGV[2] then return -1 end
local head = tonumber(ARGV[1])
if redis.call('STRLEN', KEYS[1]) < head then return -1 end
local tail = ''
if redis.call('STRLEN', KEYS[1]) > head then tail = redis.call('GETRANGE', KEYS[1], head, -1) end
if ARGV[3] .. tail == '' then
  redis.call('DEL', KEYS[1])
else
  redis.call('SET', KEYS[1], ARGV[3] .. tail)
end
redis.call('INCR', KEYS[2])
return #ARGV[3] + #tail
