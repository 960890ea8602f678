-- live_bits: derive the thread's live bitmap again (see store/readstate.go), for Rebuild.
-- KEYS[1]  post hash {p:<id>}   KEYS[2] the thread's live bitmap {p:<id>}:c:live
--          KEYS[3..#KEYS-1] (mode "set") comment hashes {p:<id>}:c:<n>
-- ARGV[1]  "set": set each comment's bit (its ord) as the comment is now — 1 while it counts in
--          the post's comments (not deleted, not removed), else 0 — and reply with the ords seen;
--          "clear": clear the bits of the ords ARGV[2..] (ords no comment holds any longer), then
--          drop the bitmap when the post counts no comment (as delete_comment does), reply 1.
-- Writes   only bits that say what the comments' own hashes say at this moment; a comment
--          written, deleted or moderated later moves its own bit in its own script, so a rebuild
--          beside traffic cannot undo it.
-- Repeat   it writes absolute bits: a second run changes nothing.
-- Revision KEYS[#KEYS] is the revision counter of the keys' aggregate; every run raises it, so
--          that a cached response that read the aggregate is known to be stale (store/revisions.go).
--!include comment_meta
redis.call('INCR', KEYS[#KEYS])
local live = KEYS[2]
if ARGV[1] == 'set' then
  local seen = {}
  for i = 3, #KEYS - 1 do
    local h = redis.call('HMGET', KEYS[i], 'deleted', 'removed')
    h = {cmeta(KEYS[i]).ord, h[1], h[2]}
    if h[1] then
      local on = (h[2] ~= '1' and h[3] ~= '1') and 1 or 0
      redis.call('SETBIT', live, h[1], on)
      table.insert(seen, h[1])
    end
  end
  return seen
end
if ARGV[1] ~= 'clear' then return redis.error_reply('INVALID unknown mode ' .. ARGV[1]) end
for i = 2, #ARGV do redis.call('SETBIT', live, ARGV[i], 0) end
if tonumber(redis.call('HGET', KEYS[1], 'comments') or '0') <= 0 then redis.call('UNLINK', live) end
return 1
