-- sessions: a user's sessions as fields of the user's hash (layout 8; see store/sessions.go):
-- 's:<session id>' → when the session expires (Unix ms). No other field of a user hash starts
-- with 's:' (name, pass, created, bio, avatar, nsfw, email, emailv, deleted, erase). Layouts 5 to
-- 7 kept them in a hash of their own, {u:<user>}:s (session id → expiry): while the keyspace may
-- still hold one (Store.sessionsApart), the scripts that meet it fold it into the user's hash
-- (fold_sessions). Scripts that read or write sessions include it ("--!include sessions"); those
-- that announce ended sessions include lib/announce first.

-- session_field is the field of the user hash that holds session id.
local function session_field(id) return 's:' .. id end

-- user_sessions returns the sessions in user hash u, each {expiry, id}.
local function user_sessions(u)
  local out = {}
  local all = redis.call('HGETALL', u)
  for i = 1, #all, 2 do
    local f = all[i]
    if string.sub(f, 1, 2) == 's:' then out[#out + 1] = {tonumber(all[i + 1]) or 0, string.sub(f, 3)} end
  end
  return out
end

-- fold_sessions moves the live sessions of layout 7's hash apart into user hash u, each with the
-- later of its two expiries where u holds it too, and deletes apart; it returns how many it moved.
-- A session of an account without a password hash (deleted, or no account) does not move: no
-- session may start there, and no user hash is ever made by a session. Its moves come before the
-- delete, so that on a full Redis the first of them is refused before anything changed.
local function fold_sessions(u, apart, now)
  if not apart or redis.call('EXISTS', apart) == 0 then return 0 end
  local moved = 0
  if redis.call('HEXISTS', u, 'pass') == 1 then
    local all = redis.call('HGETALL', apart)
    for i = 1, #all, 2 do
      local f, exp = session_field(all[i]), tonumber(all[i + 1]) or 0
      if exp > now then
        if exp > tonumber(redis.call('HGET', u, f) or '0') then redis.call('HSET', u, f, exp) end
        moved = moved + 1
      end
    end
  end
  redis.call('DEL', apart)
  return moved
end

-- prune_sessions drops the expired sessions of user hash u and, past cap, ends those that expire
-- first (the ones used longest ago), never keep (a session id, or nil); it returns the ids it
-- ended for the cap.
local function prune_sessions(u, now, cap, keep)
  local live = {}
  for _, s in ipairs(user_sessions(u)) do
    if s[2] ~= keep then
      if s[1] <= now then
        redis.call('HDEL', u, session_field(s[2]))
      else
        live[#live + 1] = s
      end
    end
  end
  local ended = {}
  local kept = 0
  if keep and redis.call('HEXISTS', u, session_field(keep)) == 1 then kept = 1 end
  local excess = #live + kept - cap
  if excess > 0 then
    table.sort(live, function(a, b) return a[1] < b[1] or (a[1] == b[1] and a[2] < b[2]) end)
    for i = 1, math.min(excess, #live) do
      redis.call('HDEL', u, session_field(live[i][2]))
      ended[#ended + 1] = live[i][2]
    end
  end
  return ended
end

-- announce_sessions_ended publishes the ids of sessions ended on the user's sessions channel, so
-- that the live streams they opened end on every replica: {"sessions":"<id> <id> ..."}, with
-- SPUBLISH when sharded is '1' (the script includes lib/announce before this library).
local function announce_sessions_ended(ids, channel, sharded)
  if #ids > 0 then announce(channel, sharded, '{"sessions":"' .. table.concat(ids, ' ') .. '"}') end
end
