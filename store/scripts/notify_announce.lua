-- notify_announce: announce the notifications of one inbox that are still unannounced, each once,
-- on the inbox's channel (notificationAdded), and take them out of the inbox's unannounced set in
-- the same step.
-- KEYS[1]  set {n:<user>}:unannounced (see notify.lua)   KEYS[2] stream <channel>:log of the
--          inbox's channel {n:<user>}:ev:notifications (the same hash tag)
-- ARGV[1]  channel   ARGV[2] entries the log keeps   ARGV[3] seconds the log lives after its last
--          event   ARGV[4] "1": SPUBLISH (sharded)   ARGV[5..] pairs: a notification id (its cause)
--          and its event, a JSON object
-- Reply    how many it announced.
-- Once     an id is announced only while it is in KEYS[1], and leaves it in the same step: two
--          deliveries into one inbox, whose notify.lua replies both list the other's new
--          notification, announce it once between them; a run that a crash kept from happening
--          leaves its ids for the next delivery's, and a run sent again (a lost reply) finds
--          them announced and announces nothing.
--!include announce
--!include log_event
local n = 0
for i = 5, #ARGV - 1, 2 do
  if redis.call('SREM', KEYS[1], ARGV[i]) == 1 then
    log_event(KEYS[2], ARGV[1], ARGV[i + 1], ARGV[2], ARGV[3], ARGV[4])
    n = n + 1
  end
end
return n
