-- mail_sent: record that the mail of a message id was sent, so that its job sends it once.
-- KEYS[1]  string {m:<message id>}:sent   ARGV[1] TTL (ms)
-- Reply    "OK". Repeat: sets it again.
-- Revision none read by a response (unrevised).
-- Full     written even when Redis is full: the mail server took the mail, and a record refused
--          would have the job send it again at every try. The DEL first is a write that Redis
--          never refuses, after which the rest of the script runs (see ratelimit.lua); the record
--          is a few dozen bytes with a TTL.
redis.call('DEL', KEYS[1])
redis.call('SET', KEYS[1], '1', 'PX', ARGV[1])
return 'OK'
