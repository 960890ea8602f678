-- group_stat: read what the directory of groups orders a group by, under a version for the
-- directory's guard (directory.go).
-- KEYS[1]  hash {g:<name>}:info   KEYS[2] zset {g:<name>}:members   KEYS[3] zset {g:<name>}:new
--          (the group's NEW ranking, by publish time)   KEYS[4] zset its NSFW part {g:<name>}:n:new
--          (see store/nsfw_lists.go)
-- ARGV[1]  optional (a rebuild's): the newest version the directory's guards hold for the group,
--          read just before; the revision is raised past it, so that the entries written from
--          this read win over entries of writes this slot no longer holds (a restore or failover
--          that kept the directory's later writes and lost the group's)
-- Reply    {version, 0} when the group does not exist (no info version and no posts), else
--          {version, 1, member count, created (ms), latest post's publish time (ms; created
--          when it holds no post), nsfw ("1" when the group is labelled NSFW, else "")}. version is the group's revision after this run: raised with
--          the read, so that a later read carries a later version and sees at least as much.
-- Repeat   it writes nothing but the revision; a second run reads again under a newer version.
-- Revision KEYS[#KEYS] is the revision counter of the keys' aggregate; every run raises it, so
--          that a cached response that read the aggregate is known to be stale (store/revisions.go).
local ver = redis.call('INCR', KEYS[#KEYS])
local floor = tonumber(ARGV[1] or '')
if floor and ver <= floor then
  ver = floor + 1
  redis.call('SET', KEYS[#KEYS], ver)
end
local posts = redis.call('ZCARD', KEYS[3]) + redis.call('ZCARD', KEYS[4])
if redis.call('HEXISTS', KEYS[1], 'ver') == 0 and posts == 0 then return {ver, 0} end
local created = redis.call('HGET', KEYS[1], 'created')
local latest
-- ends reads the score at rank i (0 the oldest, -1 the latest) of the part that goes furthest.
local function ends(i)
  local a = redis.call('ZRANGE', KEYS[3], i, i, 'WITHSCORES')[2]
  local b = redis.call('ZRANGE', KEYS[4], i, i, 'WITHSCORES')[2]
  if not a then return b end
  if not b then return a end
  if (i == 0) == (tonumber(b) < tonumber(a)) then return b end
  return a
end
if posts > 0 then
  created = created or ends(0)
  latest = ends(-1)
end
created = created or '0'
return {ver, 1, redis.call('ZCARD', KEYS[2]), created, latest or created, redis.call('HGET', KEYS[1], 'nsfw') or ''}
