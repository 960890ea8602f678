-- edit_post: change the title, body or url of a post, record when, and raise its version.
-- KEYS[1]  post hash {p:<id>}   KEYS[2] the thread's bodies {p:<id>}:c:body (see lib/post_texts.lua)
-- ARGV[1]  the editing user key   ARGV[2] now (Unix ms)
-- ARGV[3]  "1" to set the title, "0" to leave it   ARGV[4] the title
-- ARGV[5]  "1" to set the body, "0" to leave it    ARGV[6] the body
-- ARGV[7]  "1" to set the url, "0" to leave it     ARGV[8] the url ("" clears it)
-- ARGV[9]  "1" to set the NSFW label, "0" (or none) to leave it   ARGV[10] "1" labels, "" clears
-- ARGV[11] "1" to set the spoiler label, "0" (or none) to leave it   ARGV[12] likewise
--          A label that changes raises the version (the post's re-index moves it between the
--          parts of its lists, NSFW or not, see labels.go) but is not an edit of the text: edited
--          stays.
-- Reply    HGETALL of the post, with its texts (post_reply).
-- Errors   NOTFOUND (no post, a deleted one, or a removed one and not its author), FORBIDDEN (not
--          the author; taking off a label a moderator put on: lib/label_keeper.lua), before any
--          write.
-- Repeat   a second run finds the fields already set and changes nothing; so does an edit that
--          gives the values the post has (edited and ver stay as they were).
-- Revision KEYS[#KEYS] is the revision counter of the keys' aggregate; every run raises it, so
--          that a cached response that read the aggregate is known to be stale (store/revisions.go).
--!include post_texts
--!include label_keeper
redis.call('INCR', KEYS[#KEYS])
local p, texts = KEYS[1], KEYS[2]
local author = redis.call('HGET', p, 'author')
if not author or redis.call('HGET', p, 'deleted') == '1' then
  return redis.error_reply('NOTFOUND no such post')
end
if author ~= ARGV[1] then
  -- A removed post is seen only by its author and the moderators: to others it names nothing.
  if redis.call('HGET', p, 'removed') == '1' then return redis.error_reply('NOTFOUND no such post') end
  return redis.error_reply('FORBIDDEN only the author can edit a post')
end
-- A label a moderator put on stays theirs to take off (lib/label_keeper.lua).
for i, field in ipairs({'nsfw', 'spoiler'}) do
  if ARGV[7 + 2 * i] == '1' and ARGV[8 + 2 * i] ~= '1' then
    local err = label_kept(p, field, '')
    if err then return err end
  end
end
local changed = false
for i, field in ipairs({'title', 'body', 'url'}) do
  if ARGV[1 + 2 * i] == '1' and post_text(p, texts, field) ~= ARGV[2 + 2 * i] then
    set_post_text(p, texts, field, ARGV[2 + 2 * i])
    changed = true
  end
end
local relabelled = false
for i, field in ipairs({'nsfw', 'spoiler'}) do
  if ARGV[7 + 2 * i] == '1' and (redis.call('HGET', p, field) or '') ~= ARGV[8 + 2 * i] then
    if ARGV[8 + 2 * i] == '1' then redis.call('HSET', p, field, '1') else redis.call('HDEL', p, field, field .. 'Via') end
    relabelled = true
  end
end
if changed then
  redis.call('HSET', p, 'edited', ARGV[2])
end
if changed or relabelled then
  redis.call('HINCRBY', p, 'ver', 1)
end
return post_reply(p, texts)
