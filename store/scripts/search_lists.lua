-- search_lists: the posting lists of a search's terms in one bucket of the index, newest block
-- first, as far as a budget of bytes pays for (see store/search.go searchHits and
-- searchListBytes). A block is read whole — every term's first posting and list — or not at all:
-- its size is summed first (STRLEN, HSTRLEN: no list is copied), and the first block that does
-- not fit in what is left stops the reading, so that the blocks read are the newest ones, the
-- same whatever the blocks after. Read only.
-- KEYS     for each block, newest first, for each term in ARGV's order: its list
--          ({sx:<kind>:<n>}:t:<block>:<term>), then the searchRare hash of its first posting
--          ({sx:<kind>:<n>}:r:<block>:<part>)
-- ARGV[1]  the budget in bytes; ARGV[1 + i] the i-th term
-- Reply    how many blocks were read, then for each term of each block read, in KEYS' order, its
--          first posting and its list ("" for none).
local budget, terms = tonumber(ARGV[1]), #ARGV - 1
local out, spent = {0}, 0
if terms == 0 then
  return out
end
local lens = {}
for b = 0, #KEYS / (2 * terms) - 1 do
  local base, size = 2 * terms * b, 0
  for t = 1, terms do
    local first = redis.call('HSTRLEN', KEYS[base + 2 * t], ARGV[t + 1])
    local list = redis.call('STRLEN', KEYS[base + 2 * t - 1])
    lens[2 * t - 1], lens[2 * t] = first, list
    size = size + first + list
  end
  if spent + size > budget then
    break
  end
  spent = spent + size
  for t = 1, terms do
    local first, list = '', ''
    if lens[2 * t - 1] > 0 then
      first = redis.call('HGET', KEYS[base + 2 * t], ARGV[t + 1])
    end
    if lens[2 * t] > 0 then
      list = redis.call('GET', KEYS[base + 2 * t - 1])
    end
    local n = #out
    out[n + 1], out[n + 2] = first, list
  end
  out[1] = b + 1
end
return out
