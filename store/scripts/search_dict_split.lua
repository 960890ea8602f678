-- search_dict_split: move the words of a node of the search dictionary that begin with one of
-- its children into the child's node (dict_move, scripts/lib/search_dict.lua): the step of the
-- migration from layout 5 that brings a node of more than max words (one part of a bucket's
-- dictionary of layout 5, a skiplist) down to max or fewer, one child at a time.
-- KEYS[1]  the node {sx:<kind>:<n>}:d:<p>; KEYS[2] the child's node {sx:<kind>:<n>}:d:<c>
-- ARGV[1]  c (p and one more rune); ARGV[2] max.
-- Reply    how many words moved: 0 when the node holds none of c's (a write moved them), but
--          words of c that a binary of layout 5 put into the node after their move go too.
-- Writes   only KEYS (see create_comment for why).
-- Repeat   a second run finds no word of c in the node, and moves nothing.
-- Revision KEYS[#KEYS] is the revision counter of the bucket; every run raises it, so that a
--          cached response that read the bucket is known to be stale (store/revisions.go).
--!include search_dict
redis.call('INCR', KEYS[#KEYS])
return dict_move(KEYS[1], KEYS[2], ARGV[1], tonumber(ARGV[2]))
