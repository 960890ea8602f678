-- comment_meta: the fields of a comment's hash that are written once, or rewritten only whole, are
-- packed in one field m (layout 6; see store/keys.go comment and store/comment_meta.go, which
-- reads them in Go): "<parent> <author> <created> <closes> <depth> <ord> <aname>", the parent as
-- in ids ("4", "0" for a top-level comment), ord and aname empty when the comment has none. Layout
-- 5 kept each as a field of its own (parent in stored form, 12 digits); until the migration from
-- layout 5 (store/layout_comments.go) has packed every comment, a hash may have either shape, so
-- that every script reads these fields only through cmeta, and a script that rewrites one keeps
-- the hash's shape (cmeta_set for a packed one). A removal marker (delete_comment) keeps the shape of layout 5:
-- author and gone, no created. Scripts include it ("--!include comment_meta").

-- cmeta_names are the packed fields, in their order in m, named as layout 5 named its fields.
local cmeta_names = {'parent', 'author', 'created', 'closes', 'depth', 'ord', 'aname'}

-- cmeta_unpack returns the fields packed in m as a table (a field left empty is absent), the
-- parent in stored form.
local function cmeta_unpack(m)
  local t, from = {}, 1
  for i = 1, 6 do
    local sp = string.find(m, ' ', from, true)
    if not sp then return t end
    local v = string.sub(m, from, sp - 1)
    if v ~= '' then t[cmeta_names[i]] = v end
    from = sp + 1
  end
  local rest = string.sub(m, from)
  if rest ~= '' then t.aname = rest end
  if t.parent and t.parent ~= '0' then t.parent = string.rep('0', 12 - #t.parent) .. t.parent end
  return t
end

-- cmeta_pack packs the fields of table t (as cmeta returns them) into m's form.
local function cmeta_pack(t)
  local parent = '0'
  if t.parent then parent = string.format('%d', tonumber(t.parent)) end
  local v = {parent}
  for i = 2, #cmeta_names do
    local x = t[cmeta_names[i]]
    v[i] = x and tostring(x) or ''
  end
  return table.concat(v, ' ')
end

-- cmeta returns the packed fields of comment hash h, of either shape, as a table keyed by their
-- names (parent in stored form, 12 digits): empty for no hash; author alone for a removal marker.
local function cmeta(h)
  local m = redis.call('HGET', h, 'm')
  if m then return cmeta_unpack(m) end
  local v = redis.call('HMGET', h, unpack(cmeta_names))
  local t = {}
  for i, name in ipairs(cmeta_names) do
    if v[i] then t[name] = v[i] end
  end
  return t
end

-- cmeta_set writes the fields of table t into comment hash h packed, and drops the fields of
-- layout 5 that hold them.
local function cmeta_set(h, t)
  redis.call('HSET', h, 'm', cmeta_pack(t))
  redis.call('HDEL', h, unpack(cmeta_names))
end
