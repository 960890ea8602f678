-- jobs_count: the sizes of one shard's queues (jobs/jobs.go).
-- KEYS[1] zset due   KEYS[2] zset lease   KEYS[3] zset dead
-- Reply   {waiting, running, dead}; waiting counts jobs due later too.
-- Repeat  only reads.
return {redis.call('ZCARD', KEYS[1]), redis.call('ZCARD', KEYS[2]), redis.call('ZCARD', KEYS[3])}
