-- mail_sent: record that the mail of a message id was sent, so that its job sends it once.
-- KEYS[1]  string {m:<message id>}:sent   ARGV[1] TTL (ms)
-- Reply    "OK". Repeat: sets it again.
-- Revision none read by a response (unrevised).
redis.call('SET', KEYS[1], '1', 'PX', ARGV[1])
return 'OK'
