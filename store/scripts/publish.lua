-- publish: append a live event to its channel's log and publish it, in one step, so that the
-- event a subscriber receives and the one a resuming subscriber replays carry the same cursor.
-- KEYS[1]  stream <channel>:log (the channel's hash tag)
-- ARGV[1]  channel   ARGV[2] the event, a JSON object   ARGV[3] entries the log keeps
--          ARGV[4] seconds the log lives after its last event   ARGV[5] "1": SPUBLISH (sharded)
-- Reply    the event's cursor: its id in the log ("1732390000000-0"), rising with every event.
-- The published message is the event with its cursor added as "id". A log that does not exist
-- yet (its channel's first event, or the first since it expired) starts with an empty entry
-- that marks its birth, so that replay.lua can tell a cursor from before it.
-- Repeat   a second run appends and publishes the event again, under a new cursor; subscribers
--          read current data for each event, so a repeat shows the same state twice.
--!include announce
if redis.call('EXISTS', KEYS[1]) == 0 then
  redis.call('XADD', KEYS[1], '*', 'e', '')
end
local id = redis.call('XADD', KEYS[1], 'MAXLEN', '=', ARGV[3], '*', 'e', ARGV[2])
redis.call('EXPIRE', KEYS[1], ARGV[4])
local msg = '{"id":"' .. id .. '",' .. string.sub(ARGV[2], 2)
announce(ARGV[1], ARGV[5], msg)
return id
