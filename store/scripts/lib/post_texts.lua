-- post_texts: a post's body, kept apart from its hash so that the hash holds only short values
-- and stays listpack-encoded (layout 5; see keys.go postTexts): field "b" of the thread's bodies
-- {p:<id>}:c:body (whose comment fields are 12-digit numbers). The title and the url stay in the
-- hash, whatever their length, so that a listing that shows no body reads the hash alone (one
-- command a post): a title or url longer than 64 bytes (hash-max-listpack-value by default)
-- makes that post's hash a hashtable. A body in the hash is newer than the one apart: a process
-- of layout 4 still running beside the migration writes the hash alone. Scripts that write or
-- reply with a post include it ("--!include post_texts"); they take the thread's bodies as
-- KEYS[#KEYS - 1], just before the revision counter.
local post_text_fields = {title = true, body = true, url = true}

-- set_post_text writes one of a post's texts (field title, body or url) where it belongs: the body
-- apart (field "b"), the title and url in the hash; "" clears it (the title keeps a field in the
-- hash, empty). A body written drops the hash's copy, which a process of layout 4 may have left.
local function set_post_text(p, texts, field, value)
  if field == 'body' then
    if value == '' then redis.call('HDEL', texts, 'b') else redis.call('HSET', texts, 'b', value) end
    redis.call('HDEL', p, 'body')
  elseif field == 'url' and value == '' then
    redis.call('HDEL', p, 'url')
  else
    redis.call('HSET', p, field, value)
  end
end

-- post_text reads one of a post's texts: the hash's, else (the body) the one apart, else "".
local function post_text(p, texts, field)
  local v = redis.call('HGET', p, field)
  if v then return v end
  if field ~= 'body' then return '' end
  return redis.call('HGET', texts, 'b') or ''
end

-- drop_post_texts deletes a post's body apart (its thread's comments keep theirs).
local function drop_post_texts(texts)
  redis.call('HDEL', texts, 'b')
end

-- post_reply is the HGETALL of a post with its body apart put in as the field body (before the
-- hash's own fields, which win when the reader builds a map); an empty list for no post.
local function post_reply(p, texts)
  local h = redis.call('HGETALL', p)
  if #h == 0 then return h end
  local reply = {}
  local b = redis.call('HGET', texts, 'b')
  if b then
    reply[1], reply[2] = 'body', b
  end
  for _, v in ipairs(h) do table.insert(reply, v) end
  return reply
end
