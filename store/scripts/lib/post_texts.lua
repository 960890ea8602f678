-- post_texts: a post's body, kept apart from its hash so that the hash holds only short values
-- and stays listpack-encoded (layout 5; see keys.go postTexts): field "b" of the thread's bodies
-- {p:<id>}:c:body (whose comment fields are 12-digit numbers). The title and the url stay in the
-- hash, whatever their length, so that a listing that shows no body reads the hash alone (one
-- command a post): a title or url longer than 64 bytes (hash-max-listpack-value by default)
-- makes that post's hash a hashtable. Fields "t" and "u" apart are still read, and dropped by
-- any write of the text. A text in the hash is newer than one apart: a process of layout 4 still
-- running beside the migration writes the hash alone. Scripts that write or reply with a post include it ("--!include post_texts");
-- they take the thread's bodies as KEYS[#KEYS - 1], just before the revision counter.
local post_text_apart = {title = 't', body = 'b', url = 'u'}

-- set_post_text writes one of a post's texts (field title, body or url) where it belongs, and
-- drops the copy it leaves behind; "" clears it (the title keeps a field in the hash, empty).
local function set_post_text(p, texts, field, value)
  local apart = post_text_apart[field]
  if field ~= 'body' or value == '' then
    if field == 'body' or (field == 'url' and value == '') then
      redis.call('HDEL', p, field)
    else
      redis.call('HSET', p, field, value)
    end
    redis.call('HDEL', texts, apart)
  else
    redis.call('HSET', texts, apart, value)
    redis.call('HDEL', p, field)
  end
end

-- post_text reads one of a post's texts: the hash's, else the one apart, else "".
local function post_text(p, texts, field)
  local v = redis.call('HGET', p, field)
  if v then return v end
  return redis.call('HGET', texts, post_text_apart[field]) or ''
end

-- drop_post_texts deletes a post's texts apart (its thread's comments keep theirs).
local function drop_post_texts(texts)
  redis.call('HDEL', texts, 'b', 't', 'u')
end

-- post_reply is the HGETALL of a post with its texts apart put in as fields title, body and url
-- (before the hash's own fields, which win when the reader builds a map); an empty list for no post.
local function post_reply(p, texts)
  local h = redis.call('HGETALL', p)
  if #h == 0 then return h end
  local t = redis.call('HMGET', texts, 't', 'b', 'u')
  local reply = {}
  for i, field in ipairs({'title', 'body', 'url'}) do
    if t[i] then
      table.insert(reply, field)
      table.insert(reply, t[i])
    end
  end
  for _, v in ipairs(h) do table.insert(reply, v) end
  return reply
end
