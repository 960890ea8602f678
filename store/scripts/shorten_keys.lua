-- shorten_keys: rename comment keys of layout 5, named by the padded number
-- ({p:<id>}:c:000000000004, :rt, :rs, :rb, :rc), to the names of layout 6, by the short number
-- ({p:<id>}:c:4, …; see store/keys.go and store/layout_shortkeys.go).
-- KEYS     pairs of one thread: KEYS[2i-1] a key's padded name, KEYS[2i] its short name; then,
--          with ARGV, the thread's bodies hash {p:<id>}:c:body; then the revision counter
-- ARGV     comment numbers in stored form, whose bodies' fields (the same number, up to layout 6)
--          are renamed to the short number, as the keys are (none: no bodies hash in KEYS)
-- Reply    {renamed, both}: how many keys and fields it renamed, and how many it left because both
--          names exist (only a process of layout 5 writing beside the migration makes one; the
--          short key is the one this release reads, and neither is lost).
-- Writes   only KEYS: RENAME keeps a key's value and its TTL (a removal marker's).
-- Repeat   a pair already renamed has no padded key: a second run replies {0, both} and changes
--          nothing.
-- Revision KEYS[#KEYS] is the revision counter of the keys' aggregate; every run raises it, so
--          that a cached response that read the aggregate is known to be stale (store/revisions.go).
redis.call('INCR', KEYS[#KEYS])
local renamed, both = 0, 0
-- move moves one name to its short one when only the old name exists (by calling rename), and
-- counts a pair whose names both exist.
local function move(old, short, rename)
  if not old then return end
  if short then
    both = both + 1
  else
    rename()
    renamed = renamed + 1
  end
end
local last, bodies = #KEYS - 1, nil
if #ARGV > 0 then last, bodies = #KEYS - 2, KEYS[#KEYS - 1] end
for i = 1, last, 2 do
  move(redis.call('EXISTS', KEYS[i]) == 1, redis.call('EXISTS', KEYS[i + 1]) == 1,
    function() redis.call('RENAME', KEYS[i], KEYS[i + 1]) end)
end
if bodies then
  for _, n in ipairs(ARGV) do
    local short = string.gsub(n, '^0+', '')
    local body = short ~= n and redis.call('HGET', bodies, n)
    move(body, redis.call('HEXISTS', bodies, short) == 1, function()
      redis.call('HSET', bodies, short, body)
      redis.call('HDEL', bodies, n)
    end)
  end
end
return {renamed, both}
