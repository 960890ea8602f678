-- search_dict_read: the first words of a bucket's search dictionary that begin with a prefix, in
-- byte order (see store/search.go searchDict and scripts/lib/search_dict.lua). It follows the
-- prefix's chain of nodes down to the first that has no mark of the next, which holds every word
-- of the prefix, or the marks of children that hold them: it reads the node's words of the
-- prefix and, in a mark's place, its child's words (and their children's), until it has enough.
-- Read only. The children's nodes are not among KEYS (they are not known before): on a cluster,
-- while the bucket's slot migrates, Redis may refuse the call, which the runner sends again; and
-- the node importing the slot, asked with ASKING once it holds KEYS, reads a child not yet moved
-- as an empty key. A marked child always holds a word (words never leave a node but with the
-- whole index, which dropSearch deletes parents first), so a missing one answers TRYAGAIN, sent
-- again too, rather than a list short of its words.
-- KEYS     the nodes of the prefix's prefixes of two runes or more, shortest first, the prefix's
--          own last: {sx:<kind>:<n>}:d:<prefix>
-- ARGV[1]  the prefix; ARGV[2] how many words at most; ARGV[3] the nodes' keys without their
--          prefix ({sx:<kind>:<n>}:d:); ARGV[3 + i] the length in bytes of KEYS[i]'s prefix.
-- Reply    the words, in byte order.
local q, want, base, n = ARGV[1], tonumber(ARGV[2]), ARGV[3], #KEYS
local out, moving = {}, nil
local function walk(node, lo, hi)
  local offset = 0
  while #out < want do
    local page = redis.call('ZRANGEBYLEX', node, lo, hi, 'LIMIT', offset, want)
    for _, m in ipairs(page) do
      if string.byte(m, -1) == 0 then
        local child = base .. string.sub(m, 1, -2)
        if redis.call('EXISTS', child) == 0 then
          moving = child
          return
        end
        walk(child, '-', '+')
        if moving then return end
      else
        out[#out + 1] = m
      end
      if #out >= want then
        return
      end
    end
    if #page < want then
      return
    end
    offset = offset + #page
  end
end
for i = 1, n do
  if i == n or not redis.call('ZSCORE', KEYS[i], string.sub(q, 1, tonumber(ARGV[i + 4])) .. '\0') then
    walk(KEYS[i], '[' .. q, '[' .. q .. '\255')
    break
  end
end
if moving then return redis.error_reply('TRYAGAIN the search dictionary\'s node ' .. moving .. ' is not here yet') end
return out
