-- update_profile: set or clear the bio and avatar of a user.
-- KEYS[1]  user hash {u:<user>}
-- ARGV[1]  "1" to set the bio, "0" to leave it      ARGV[2] the bio ("" clears it)
-- ARGV[3]  "1" to set the avatar, "0" to leave it   ARGV[4] the avatar URL ("" clears it)
-- ARGV[5]  "1" to set whether the user shows NSFW posts (field nsfw), "0" to leave it
-- ARGV[6]  "1" shows them, "" does not (the field is dropped: false is the default)
-- ARGV[7]  the user's Sessions channel   ARGV[8] "1" to publish with SPUBLISH (lib/announce)
-- ARGV[9..] the fields of the user hash to reply with (never the password hash)
-- Reply    HMGET of those fields.
-- Event    a run that changes the NSFW setting publishes {"nsfw":"1"} (shows) or {"nsfw":"0"}
--          on the channel (without a log): the user's open live streams apply it
--          (live.SessionWatch).
-- Errors   NOTFOUND (no such user).
-- Repeat   a second run sets the same values again, which changes nothing and publishes nothing.
-- Revision KEYS[#KEYS] is the revision counter of the keys' aggregate; every run raises it, so
--          that a cached response that read the aggregate is known to be stale (store/revisions.go).
--!include announce
redis.call('INCR', KEYS[#KEYS])
local u = KEYS[1]
if redis.call('HEXISTS', u, 'name') == 0 then return redis.error_reply('NOTFOUND no such user') end
local nsfw = redis.call('HGET', u, 'nsfw') or ''
for i, field in ipairs({'bio', 'avatar', 'nsfw'}) do
  if ARGV[2 * i - 1] == '1' then
    if ARGV[2 * i] == '' then
      redis.call('HDEL', u, field)
    else
      redis.call('HSET', u, field, ARGV[2 * i])
    end
  end
end
if ARGV[5] == '1' and ARGV[6] ~= nsfw then
  announce(ARGV[7], ARGV[8], ARGV[6] == '' and '{"nsfw":"0"}' or '{"nsfw":"1"}')
end
return redis.call('HMGET', u, unpack(ARGV, 9))
