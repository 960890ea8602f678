-- announce: publish a message on a channel the way the store publishes (store/events.go):
-- SPUBLISH on a cluster with sharded pub/sub (sharded is "1"), PUBLISH otherwise. Scripts that
-- publish include it ("--!include announce") and take the flag as an argument
-- (Store.pubSubArg).
local function announce(channel, sharded, msg)
  if sharded == '1' then
    redis.call('SPUBLISH', channel, msg)
  else
    redis.call('PUBLISH', channel, msg)
  end
end
