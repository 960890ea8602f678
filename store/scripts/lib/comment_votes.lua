-- comment_votes: the votes on a thread's comments are kept in buckets of several comments each
-- (layout 6; see store/keys.go commentVotes): bucket {p:<id>}:c:v<b> holds a field
-- "<number as in ids>:<voter user key>" → 1 | -1 for each vote on one of its comments. Layout 5
-- kept a hash per comment, {p:<id>}:c:<n>:votes (voter → 1 | -1); a script that writes or drops a
-- comment's votes takes that hash too and moves it into the bucket (cvotes_adopt) or drops it, so
-- that a vote is only ever counted once while the migration to layout 6 (store/layout_cvotes.go)
-- has not reached the comment. Scripts include it ("--!include comment_votes").

-- cvotes_prefix is what the fields of the votes on comment num (stored form, "000000000004")
-- start with: "4:".
local function cvotes_prefix(num)
  return string.format('%d', tonumber(num)) .. ':'
end

-- cvotes_adopt moves the votes on comment num that layout 5 kept in the hash legacy into bucket,
-- drops the hash and returns how many votes it moved. A vote in the hash replaces one in the
-- bucket: only a process of layout 5, still running beside the migration, writes the hash.
local function cvotes_adopt(bucket, legacy, num)
  if redis.call('EXISTS', legacy) == 0 then return 0 end
  local prefix = cvotes_prefix(num)
  local all = redis.call('HGETALL', legacy)
  local args = {}
  for j = 1, #all, 2 do
    args[#args + 1] = prefix .. all[j]
    args[#args + 1] = all[j + 1]
    if #args >= 400 then redis.call('HSET', bucket, unpack(args)); args = {} end -- bounded unpack
  end
  if #args > 0 then redis.call('HSET', bucket, unpack(args)) end
  redis.call('UNLINK', legacy)
  return #all / 2
end

-- cvotes_drop deletes every vote on comment num (stored form) from bucket, and the comment's hash
-- of layout 5 legacy: the comment is gone for good. It walks the bucket's fields of the comment
-- with HSCAN, all of them at once while the bucket is a listpack.
local function cvotes_drop(bucket, legacy, num)
  local match = cvotes_prefix(num) .. '*'
  local cursor = '0'
  repeat
    local r = redis.call('HSCAN', bucket, cursor, 'MATCH', match, 'COUNT', 500)
    cursor = r[1]
    local fields = {}
    for j = 1, #r[2], 2 do fields[#fields + 1] = r[2][j] end
    if #fields > 0 then redis.call('HDEL', bucket, unpack(fields)) end
  until cursor == '0'
  redis.call('UNLINK', legacy)
end
