-- watch_index: record in a user's watch index, within its cap, what they choose a watch mode for
-- (store/watch.go), ahead of the mode itself.
-- KEYS[1]  zset {u:<user>}:watches, item ("p:<id>", "g:<name>") → when its mode was chosen (ms)
-- ARGV[1]  the item   ARGV[2] now (Unix ms)   ARGV[3] the most items the index may hold
-- ARGV[4…] for REPLIES on a post only: the entries of the post's groups ("g:<name>"). REPLIES is
--          the default, kept as a choice only where it means more than the default: where the
--          user chose a mode for one of the post's groups (a mode chosen for the post wins over
--          its groups'). The item is then recorded as for any other mode; with none of them in
--          the index, nothing is recorded and the reply is 0.
-- Reply    1 when the item is in the index (recorded now, or already there: its time moves),
--          0 when nothing was recorded.
-- Errors   LIMIT when the item is not in the index and the index holds ARGV[3] items.
-- Repeat   a second run finds the item recorded and changes nothing but its time.
-- Revision none: no response reads the index (unrevised in store/scripts.go).
if #ARGV > 3 then
  local chosen = false
  for i = 4, #ARGV do
    if redis.call('ZSCORE', KEYS[1], ARGV[i]) then chosen = true break end
  end
  if not chosen then return 0 end
end
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) and redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then
  return redis.error_reply('LIMIT a user can watch or mute at most ' .. ARGV[3] .. ' posts and groups; set some back to REPLIES first')
end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
return 1
