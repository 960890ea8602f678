-- search_dict_add: put a word into its bucket's search dictionary (see store/search.go
-- searchDict and scripts/lib/search_dict.lua), at the first node of its chain that has no mark of
-- the next one. A node that is full (max members, the most a listpack-encoded sorted set holds)
-- first moves the words of the word's next prefix into that prefix's node (dict_move), so that no
-- node grows past max; a word whose whole self is the node's prefix has no next node, and joins
-- its node however full.
-- KEYS     the nodes of the word's prefixes of two runes or more, shortest first:
--          {sx:<kind>:<n>}:d:<prefix>; KEYS[#KEYS] the bucket's revision counter
-- ARGV[1]  the word; ARGV[2] max; ARGV[3 + i - 1] the length in bytes of KEYS[i]'s prefix.
-- Reply    1 if the word was put in, 0 if the dictionary held it already.
-- Writes   only KEYS: a word's nodes are its prefixes' (see create_comment for why).
-- Repeat   a second run finds the word and writes nothing but the revision.
-- Revision KEYS[#KEYS] is the revision counter of the bucket; every run raises it, so that a
--          cached response that read the bucket is known to be stale (store/revisions.go).
--!include search_dict
redis.call('INCR', KEYS[#KEYS])
local word, max, n = ARGV[1], tonumber(ARGV[2]), #KEYS - 1
for i = 1, n do
  local node, c = KEYS[i], nil
  if i < n then
    c = string.sub(word, 1, tonumber(ARGV[i + 3]))
  end
  if not (c and redis.call('ZSCORE', node, c .. '\0')) then
    if redis.call('ZSCORE', node, word) then
      return 0
    end
    if not c or redis.call('ZCARD', node) < max then
      redis.call('ZADD', node, 0, word)
      return 1
    end
    dict_move(node, KEYS[i + 1], c, max)
  end
end
return 0
