-- follower: mirror one relation on its derived side — a follow on the followee's side, a
-- membership on the group's side — guarded by the version the authoritative side handed out
-- (follow.lua), and, for a follow, decide how the followee's posts reach the follower's feed.
-- KEYS[1]  zset of the mirrored relations ({u:<b>}:followers, follower → follow time ms;
--          {g:<name>}:members, member → join time ms)
-- KEYS[2]  hash, relation → the version last applied ({u:<b>}:followers:ver, {g:<name>}:members:ver)
-- KEYS[3]  set {u:<b>}:push (followers whose feeds receive b's posts when they are published) —
--          a follow only: a membership passes KEYS[1], KEYS[2] and the revision counter alone
-- ARGV[1]  the authoritative side (follower user key, member user key)   ARGV[2] version
-- ARGV[3]  present 1 | 0   ARGV[4] relation time ms   ARGV[5] the most members the push set may hold
-- ARGV[6]  optional, a follow only: "force" — the follower's pull set is full (follow_mode.lua),
--          so b pushes to it beyond ARGV[5]: the follower joins the push set if this version is
--          still the newest applied and it still follows b; nothing else changes
-- Reply    "push" | "pull" | "none": how the follower gets b's posts, as of the newest version
--          applied. A new follower joins the push set while it has room; otherwise its feed
--          pulls b's posts at read time. An existing follower keeps its mode. Without a push set
--          (a membership): "pull" when present, "none" when absent.
-- Repeat   a run whose version is not newer than the stored one changes nothing and replies with
--          the current mode. Versions stay stored after an unfollow, so a late "add" cannot revive
--          a relation that was removed after it. A "force" run only adds to the push set, for the
--          newest version, so a repeat or a late one changes nothing more.
-- Revision KEYS[#KEYS] is the revision counter of the keys' aggregate; every run raises it, so
--          that a cached response that read the aggregate is known to be stale (store/revisions.go).
redis.call('INCR', KEYS[#KEYS])
local a = ARGV[1]
local push = #KEYS == 4
local function mode()
  if not redis.call('ZSCORE', KEYS[1], a) then return 'none' end
  if push and redis.call('SISMEMBER', KEYS[3], a) == 1 then return 'push' end
  return 'pull'
end
local cur = tonumber(redis.call('HGET', KEYS[2], a) or '-1')
if ARGV[6] == 'force' then
  if push and cur <= tonumber(ARGV[2]) and redis.call('ZSCORE', KEYS[1], a) then
    redis.call('SADD', KEYS[3], a)
  end
  return mode()
end
if cur >= tonumber(ARGV[2]) then return mode() end
redis.call('HSET', KEYS[2], a, ARGV[2])
if ARGV[3] == '1' then
  local had = redis.call('ZSCORE', KEYS[1], a)
  redis.call('ZADD', KEYS[1], ARGV[4], a)
  if push and not had and redis.call('SCARD', KEYS[3]) < tonumber(ARGV[5]) then
    redis.call('SADD', KEYS[3], a)
  end
else
  redis.call('ZREM', KEYS[1], a)
  if push then redis.call('SREM', KEYS[3], a) end
end
return mode()
