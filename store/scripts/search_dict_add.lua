-- search_dict_add: put words into their bucket's search dictionary (see store/search.go
-- searchDict and scripts/lib/search_dict.lua), each at the first node of its chain that has no
-- mark of the next. A node that is full (max members, the most a listpack-encoded sorted set
-- holds) first moves the words of the word's next prefix into that prefix's node (dict_move), so
-- that no node grows past max; a word whose whole self is the node's prefix has no next node,
-- and joins its node however full. A group of no word leaves its mark: the node then holds more
-- than max members, and the caller moves its largest groups down (search_dict_split, whose
-- children's keys only the caller knows).
-- KEYS     for each word in turn, the nodes of its prefixes of two runes or more, shortest first:
--          {sx:<kind>:<n>}:d:<prefix>; KEYS[#KEYS] the bucket's revision counter
-- ARGV[1]  max; then for each word in turn: the word, how many nodes it has (n), and the length
--          in bytes of each node's prefix (n values).
-- Reply    {how many words were put in (those the dictionary did not hold already), the keys of
--          the nodes left with more than max members...}.
-- Writes   only KEYS: a word's nodes are its prefixes' (see create_comment for why).
-- Repeat   a second run finds every word and writes nothing but the revision.
-- Revision KEYS[#KEYS] is the revision counter of the bucket; every run raises it, so that a
--          cached response that read the bucket is known to be stale (store/revisions.go).
--!include search_dict
redis.call('INCR', KEYS[#KEYS])
local max = tonumber(ARGV[1])
local over, noted = {}, {}

-- note lists node among those left with more than max members, once.
local function note(node)
  if not noted[node] and redis.call('ZCARD', node) > max then
    noted[node] = true
    over[#over + 1] = node
  end
end

-- add puts word, whose nodes are KEYS[k + 1 .. k + n] and their prefixes' lengths
-- ARGV[a + 1 .. a + n], into the first of them without the next one's mark; 1 if it was put in.
local function add(word, k, a, n)
  for i = 1, n do
    local node, c = KEYS[k + i], nil
    if i < n then
      c = string.sub(word, 1, tonumber(ARGV[a + i + 1]))
    end
    if not (c and redis.call('ZSCORE', node, c .. '\0')) then
      if redis.call('ZSCORE', node, word) then
        return 0
      end
      if not c or redis.call('ZCARD', node) < max then
        redis.call('ZADD', node, 0, word)
        if not c then note(node) end -- the word that is the node's prefix joins it however full
        return 1
      end
      dict_move(node, KEYS[k + i + 1], c, max)
      note(node)
    end
  end
  return 0
end

local added, k, a = 0, 0, 2
while a <= #ARGV do
  local word, n = ARGV[a], tonumber(ARGV[a + 1])
  added = added + add(word, k, a + 1, n)
  k, a = k + n, a + 2 + n
end
return {added, unpack(over)}
