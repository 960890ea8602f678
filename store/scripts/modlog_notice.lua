-- modlog_notice: link an action of the moderation log to the notification that told whom it
-- concerns (see modnotices.go).
-- KEYS[1]  hash {modlog}:notices (action key → notification global id)
-- ARGV[1]  the action's key   ARGV[2] the notification's global id
-- Reply    1 when the link was made now, 0 when it was already.
-- Repeat   a second run finds the link and changes nothing.
-- Revision KEYS[#KEYS], raised when the link is made.
if redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2]) == 0 then return 0 end
redis.call('INCR', KEYS[#KEYS])
return 1
