-- search_add: append one document's postings to the posting lists of one bucket of the search
-- index (see store/search.go), add its words to the bucket's dictionary, and count it.
-- KEYS[1]  the bucket's dictionary (sorted set, all scores 0)   KEYS[2] the bucket's counts hash
--          (docs: documents counted here; top: the newest block written)
-- KEYS[3..#KEYS-1] posting lists (strings), one per ARGV posting
-- ARGV[1]  "1" to count a new document in this bucket, else "0"   ARGV[2] the block written
-- ARGV[3]  how many posting lists follow (n)   ARGV[4..3+n] one posting per list
-- ARGV[4+n..3+2n] the word of each list, "" for a list that is no word (a group or author mark);
--          a word joins the dictionary when its list in this block begins
-- Repeat   a second run appends the postings again; a document's last posting in a list is the
--          one that counts, so a repeat changes no search result (it only costs bytes until the
--          next rebuild). The count may count a document twice: it only feeds IDF.
-- Revision KEYS[#KEYS] is the bucket's revision counter; every run raises it.
local n = tonumber(ARGV[3])
for i = 1, n do
  local posting, word = ARGV[i + 3], ARGV[i + 3 + n]
  if redis.call('APPEND', KEYS[i + 2], posting) == #posting and word ~= '' then
    redis.call('ZADD', KEYS[1], 0, word)
  end
end
if ARGV[1] == '1' then redis.call('HINCRBY', KEYS[2], 'docs', 1) end
local top = tonumber(redis.call('HGET', KEYS[2], 'top') or '-1')
if tonumber(ARGV[2]) > top then redis.call('HSET', KEYS[2], 'top', ARGV[2]) end
redis.call('INCR', KEYS[#KEYS])
return 1
