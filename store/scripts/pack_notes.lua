-- pack_notes: write the records of one inbox's notifications packed (layout 4 → 5; see
-- notifications.go pack) in place of layout 4's JSON, and write the hash anew, so that Redis keeps
-- it listpack-encoded (a hash once a hashtable stays one, whatever its values become).
-- KEYS[1]  hash {n:<user>}:notes (notification id → record)
-- ARGV     triples: a notification id, its JSON record as read, its packed record. A record that
--          is no longer the JSON read (trimmed, or written since) is left as it is.
-- Reply    how many records were packed.
-- Writes   only KEYS (see create_comment for why).
-- Repeat   a second run finds no JSON record that it was given, and packs nothing; the hash is
--          written anew only when a record was packed.
-- Revision KEYS[#KEYS] is the revision counter of the keys' aggregate; every run raises it, so
--          that a cached response that read the aggregate is known to be stale (store/revisions.go).
redis.call('INCR', KEYS[#KEYS])
local notes, n = KEYS[1], 0
for i = 1, #ARGV, 3 do
  if redis.call('HGET', notes, ARGV[i]) == ARGV[i + 1] then
    redis.call('HSET', notes, ARGV[i], ARGV[i + 2])
    n = n + 1
  end
end
if n == 0 then return 0 end
local all = redis.call('HGETALL', notes)
redis.call('DEL', notes)
for i = 1, #all, 200 do
  redis.call('HSET', notes, unpack(all, i, math.min(i + 199, #all)))
end
return n
