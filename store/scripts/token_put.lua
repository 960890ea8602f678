-- token_put: store a single-use token of a user (a password reset's).
-- KEYS[1]  the token string {u:<user>}:<purpose>:<digest>   KEYS[2] user hash {u:<user>}
-- ARGV[1]  the address it was sent to   ARGV[2] expiry (Unix ms)   ARGV[3] TTL (ms)
-- Reply    "OK". Repeat: sets the same value again (the password hash unchanged).
-- Stores   "<address>\n<expiry>\n<SHA-1 of the user's password hash>": the token works only
--          while the password is the one it was made under (token_take), so that a password
--          changed, by changePassword or another reset, or an account deleted ends every reset
--          link mailed before. The hash never leaves the script.
-- Revision none read by a response (unrevised).
local pass = redis.call('HGET', KEYS[2], 'pass') or ''
redis.call('SET', KEYS[1], ARGV[1] .. '\n' .. ARGV[2] .. '\n' .. redis.sha1hex(pass), 'PX', ARGV[3])
return 'OK'
