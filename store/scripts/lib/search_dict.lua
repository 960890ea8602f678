-- search_dict: the search dictionary's nodes (see store/search.go searchDict). A node
-- {sx:<kind>:<n>}:d:<p> is a sorted set, all scores 0, of words that begin with p, and of marks
-- "<c>\0", one per child c (p and one more rune) whose words are all in the child's node
-- {sx:<kind>:<n>}:d:<c> and below it, none in this one. A mark sorts where its child's words
-- would: a prefix's words, in byte order, are a node's words with the children's words in
-- place of their marks. No word holds a NUL (terms are letters and digits), so a member ending
-- in one is a mark. Scripts that write nodes include it ("--!include search_dict").

-- dict_move moves the words of node that begin with c (its child, whose node is child) into
-- child, puts c's mark in their place, and returns how many it moved. A node that held more than
-- max members (a skiplist on Redis, which stays one however few it keeps) and holds max or fewer
-- after is written anew, so that it is listpack-encoded again.
local function dict_move(node, child, c, max)
  local before = redis.call('ZCARD', node)
  local group = redis.call('ZRANGEBYLEX', node, '[' .. c, '[' .. c .. '\255')
  local add, rem = {}, {}
  for _, m in ipairs(group) do
    if string.byte(m, -1) ~= 0 then
      add[#add + 1] = 0
      add[#add + 1] = m
      rem[#rem + 1] = m
    end
  end
  for i = 1, #add, 2000 do
    redis.call('ZADD', child, unpack(add, i, math.min(i + 1999, #add)))
  end
  for i = 1, #rem, 1000 do
    redis.call('ZREM', node, unpack(rem, i, math.min(i + 999, #rem)))
  end
  redis.call('ZADD', node, 0, c .. '\0')
  if before > max and redis.call('ZCARD', node) <= max then
    local kept = redis.call('ZRANGE', node, 0, -1)
    redis.call('DEL', node)
    local args = {}
    for _, m in ipairs(kept) do
      args[#args + 1] = 0
      args[#args + 1] = m
    end
    redis.call('ZADD', node, unpack(args))
  end
  return #rem
end
