-- admins: grant or revoke site admin to an account by its user key (the operator's command,
-- `agora admin grant|revoke`), or record when the configured admin names were first seen.
-- KEYS[1]  hash {admins}, user key → when it was granted (Unix ms)
-- KEYS[2]  hash {admins}:named, configured name → when the setting first named it (Unix ms)
-- ARGV[1]  "grant", "revoke" or "named"   ARGV[2] now (Unix ms)   ARGV[3..] user keys or names
-- Reply    for grant and revoke, how many entries changed; for named, the first-seen time of each
--          name ARGV[3..], in order.
-- Repeat   a second run changes nothing: a grant keeps its first time, a name its first sighting.
-- Revision KEYS[#KEYS], raised by every run that changed something.
local op, now = ARGV[1], ARGV[2]
local changed, out = 0, {}
for i = 3, #ARGV do
  if op == 'grant' then
    changed = changed + redis.call('HSETNX', KEYS[1], ARGV[i], now)
  elseif op == 'revoke' then
    changed = changed + redis.call('HDEL', KEYS[1], ARGV[i])
  else
    changed = changed + redis.call('HSETNX', KEYS[2], ARGV[i], now)
    out[#out + 1] = redis.call('HGET', KEYS[2], ARGV[i])
  end
end
if changed > 0 then redis.call('INCR', KEYS[#KEYS]) end
if op == 'named' then return out end
return changed
