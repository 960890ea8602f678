-- layout: record the layout of the keyspace in its version hash (see store/layout.go).
-- KEYS[1]  {meta}:layout, a hash: version, migrating (the version a migration is making),
--          started and finished (ms since the epoch, of the last migration)
-- ARGV[1]  "init": write version ARGV[3] where the hash has none (a fresh keyspace, or the
--          data of the release before layouts were recorded)
--          "begin": mark a migration from ARGV[2] to ARGV[3] in progress, where the version is
--          ARGV[2]; started is kept when it is already in progress (a resumed migration)
--          "finish": record version ARGV[3] where the version is ARGV[2], end the migration
-- ARGV[4]  now, ms since the epoch
-- Reply    the version recorded after the call
-- Repeat   every op is a no-op once done: init never overwrites a version, begin and finish
--          apply only to the version they start from.
local v = redis.call('HGET', KEYS[1], 'version')
local op, from, to, now = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
if op == 'init' then
  if not v then
    redis.call('HSET', KEYS[1], 'version', to)
    return tonumber(to)
  end
elseif op == 'begin' then
  if v == from and redis.call('HGET', KEYS[1], 'migrating') ~= to then
    redis.call('HSET', KEYS[1], 'migrating', to, 'started', now)
    redis.call('HDEL', KEYS[1], 'finished')
  end
elseif op == 'finish' then
  if v == from then
    redis.call('HSET', KEYS[1], 'version', to, 'finished', now)
    redis.call('HDEL', KEYS[1], 'migrating')
    return tonumber(to)
  end
end
return tonumber(v or '0')
