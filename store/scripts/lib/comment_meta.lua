-- comment_meta: the fields of a comment's hash that are written once are packed in one field m
-- (layout 6; see store/keys.go comment and store/comment_meta.go, which reads them in Go):
-- "<parent> <created> <closes> <depth> <ord>", the parent as in ids ("4", "0" for a top-level
-- comment), ord empty when the comment has none. The author's name, when known, is field n, and the
-- author (a user key: the name in lower case) is then not kept; field a holds the author when the
-- name is unknown (or, which no write makes, is not the author's in lower case). m holds at most
-- 57 bytes and a and n at most 32 each, so that the hash stays a listpack
-- (hash-max-listpack-value 64) whatever the names' lengths: the names stay out of m. Layout 5
-- kept each of these as a field of its own (cmeta_old; parent in stored form, 12 digits). Until
-- the migration from layout 5 (store/layout_comments.go) has packed every comment, a hash may
-- have either shape: one with m is packed and has none of cmeta_old, one without m is of layout
-- 5. Every script reads these fields only through cmeta; one that rewrites the name keeps the
-- hash's shape (cmeta_set for a packed one). A removal marker (delete_comment) keeps the shape of
-- layout 5: author and gone, no created. Scripts include it ("--!include comment_meta").

-- cmeta_names are the fields packed in m, in their order there, named as layout 5 named them.
local cmeta_names = {'parent', 'created', 'closes', 'depth', 'ord'}

-- cmeta_old are the fields of layout 5 that layout 6 keeps in m, a and n.
local cmeta_old = {'parent', 'author', 'created', 'closes', 'depth', 'ord', 'aname'}

-- Since layout 7 the times in m are short (store/comment_meta.go): created as "~" and its
-- milliseconds in base 36, closes as "+" and its distance from created in base 36 (or "~" and its
-- own time, should it come before created). A time without a mark is decimal (layout 6). Scripts
-- see them as decimal strings, whatever the shape.

-- cmeta_b36 writes a whole number n >= 0 in base 36, lower case.
local function cmeta_b36(n)
  local digits, out = '0123456789abcdefghijklmnopqrstuvwxyz', ''
  n = math.floor(n)
  repeat
    local d = n % 36
    out = string.sub(digits, d + 1, d + 1) .. out
    n = (n - d) / 36
  until n == 0
  return out
end

-- cmeta_ms returns the milliseconds of time s as m holds it ("~" and base 36, or decimal).
local function cmeta_ms(s)
  if string.sub(s, 1, 1) == '~' then return tonumber(string.sub(s, 2), 36) end
  return tonumber(s)
end

-- cmeta_unpack returns the fields packed in m as a table (a field left empty is absent), the
-- parent in stored form and the times in decimal.
local function cmeta_unpack(m)
  local t, from = {}, 1
  for i = 1, #cmeta_names do
    local sp = string.find(m, ' ', from, true)
    local v = string.sub(m, from, (sp or 0) - 1)
    if v ~= '' then t[cmeta_names[i]] = v end
    if not sp then break end
    from = sp + 1
  end
  if t.parent and t.parent ~= '0' then t.parent = string.rep('0', 12 - #t.parent) .. t.parent end
  local created = t.created and cmeta_ms(t.created)
  if t.closes then
    if string.sub(t.closes, 1, 1) == '+' then
      t.closes = string.format('%.0f', (created or 0) + tonumber(string.sub(t.closes, 2), 36))
    else
      t.closes = string.format('%.0f', cmeta_ms(t.closes))
    end
  end
  if created then t.created = string.format('%.0f', created) end
  return t
end

-- cmeta_pack packs the fields of table t (as cmeta returns them) into m's form, the times short.
local function cmeta_pack(t)
  local v = {t.parent and string.format('%d', tonumber(t.parent)) or '0'}
  local created = t.created and cmeta_ms(tostring(t.created)) or 0
  for i = 2, #cmeta_names do
    local name, x = cmeta_names[i], t[cmeta_names[i]]
    if x == nil or x == '' then
      v[i] = ''
    elseif name == 'created' then
      v[i] = '~' .. cmeta_b36(created)
    elseif name == 'closes' then
      local closes = cmeta_ms(tostring(x))
      if closes >= created then v[i] = '+' .. cmeta_b36(closes - created) else v[i] = '~' .. cmeta_b36(closes) end
    else
      v[i] = tostring(x)
    end
  end
  return table.concat(v, ' ')
end

-- cmeta returns the fields of comment hash h that layout 6 packs, of either shape, as a table
-- keyed by their names of layout 5 (parent in stored form): empty for no hash; author alone for
-- a removal marker.
local function cmeta(h)
  local m = redis.call('HGET', h, 'm')
  if m then
    local t = cmeta_unpack(m)
    local an = redis.call('HMGET', h, 'a', 'n')
    t.aname = an[2] or nil
    t.author = an[1] or (t.aname and string.lower(t.aname)) or nil
    return t
  end
  local v = redis.call('HMGET', h, unpack(cmeta_old))
  local t = {}
  for i, name in ipairs(cmeta_old) do
    if v[i] then t[name] = v[i] end
  end
  return t
end

-- cmeta_set writes the fields of table t (as cmeta returns them) into comment hash h packed, and
-- drops the fields of layout 5 that held them.
local function cmeta_set(h, t)
  redis.call('HSET', h, 'm', cmeta_pack(t))
  if t.aname and string.lower(t.aname) == t.author then
    redis.call('HSET', h, 'n', t.aname)
    redis.call('HDEL', h, 'a')
  else
    redis.call('HSET', h, 'a', t.author)
    if t.aname then redis.call('HSET', h, 'n', t.aname) else redis.call('HDEL', h, 'n') end
  end
  redis.call('HDEL', h, unpack(cmeta_old))
end

-- cmeta_unname takes the author's name off comment hash h, of either shape, keeping the author: a
-- deleted user's comment (disown) and a tombstone (delete_comment), which no reader shows with
-- an author, keep only the user key.
local function cmeta_unname(h)
  if redis.call('HEXISTS', h, 'm') == 1 then
    local t = cmeta(h)
    if t.aname then
      t.aname = nil
      cmeta_set(h, t)
    end
  else
    redis.call('HDEL', h, 'aname')
  end
end

-- creplies returns the number of direct replies comment hash h counts. Since layout 7 a comment's
-- counts (up, down, replies) are not written until they are first raised: a missing one is 0,
-- and a comment that nobody voted on or replied to keeps a smaller listpack.
local function creplies(h)
  return tonumber(redis.call('HGET', h, 'replies') or '0')
end

-- cbody returns the field of a comment's body in its thread's bodies hash ({p:<id>}:c:body):
-- its number as in ids ("4"), from the stored form ("000000000004") or the short one. Layouts up to
-- 6 named the field by the stored form; the migration renames them with the thread's keys
-- (shorten_keys.lua), before any script of this release touches the thread.
local function cbody(num)
  return (string.gsub(num, '^0+', ''))
end
