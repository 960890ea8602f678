-- token_put: store a single-use token of a user (a password reset's).
-- KEYS[1]  the token string {u:<user>}:<purpose>:<digest>   KEYS[2] user hash {u:<user>}
-- ARGV[1]  the address it was sent to   ARGV[2] expiry (Unix ms)   ARGV[3] TTL (ms)
-- Reply    "OK". Repeat: sets the same value again.
-- Revision none read by a response (unrevised).
redis.call('SET', KEYS[1], ARGV[1] .. '\n' .. ARGV[2], 'PX', ARGV[3])
return 'OK'
