-- search_rare: move the posting list of a term that names one document into its field of its
-- bucket's hash of first postings (layout 4 → 5; see store/search.go searchRare), so that the
-- term costs a field and not a key.
-- KEYS[1]  string {sx:<kind>:<n>}:t:<block>:<term>, the term's list
-- KEYS[2]  hash {sx:<kind>:<n>}:r:<block>:<part> (term → its first posting)
-- ARGV[1]  the term; ARGV[2] its list as read; ARGV[3] the list's one posting, packed anew.
-- Reply    1 if the list was moved, else 0: it has changed since it was read (a posting
--          appended), or the term's field holds a posting already (written since), and the list
--          stays where it is, read with the field.
-- Writes   only KEYS (see create_comment for why).
-- Repeat   a second run finds no list, and moves nothing.
-- Revision KEYS[#KEYS] is the revision counter of the bucket; every run raises it, so that a
--          cached response that read the bucket is known to be stale (store/revisions.go).
redis.call('INCR', KEYS[#KEYS])
if redis.call('GET', KEYS[1]) ~= ARGV[2] then return 0 end
if redis.call('HSETNX', KEYS[2], ARGV[1], ARGV[3]) == 0 then return 0 end
redis.call('DEL', KEYS[1])
return 1
