-- log_event: append a live event to its channel's log and publish it with its cursor, as
-- publish.lua does (store/events.go). Scripts that include it include announce first.
-- log is the stream <channel>:log, event the event's JSON object, keep the entries the log keeps,
-- age the seconds it lives after its last event, sharded Store.pubSubArg. It returns the event's
-- cursor: its id in the log. A log that does not exist yet starts with an empty entry that marks
-- its birth, so that replay.lua can tell a cursor from before it.
local function log_event(log, channel, event, keep, age, sharded)
  if redis.call('EXISTS', log) == 0 then
    redis.call('XADD', log, '*', 'e', '')
  end
  local id = redis.call('XADD', log, 'MAXLEN', '=', keep, '*', 'e', event)
  redis.call('EXPIRE', log, age)
  announce(channel, sharded, '{"id":"' .. id .. '",' .. string.sub(event, 2))
  return id
end
