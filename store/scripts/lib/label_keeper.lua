-- label_keeper: who may take a content label off a post. A label a moderator put on someone's
-- post (or confirmed, when the author had put it on) records the group their authority came
-- through in the post's field <label>Via ("nsfwVia", "spoilerVia"; "*" for a site admin): only
-- that group's moderators and the admins take it off, and an admin's only the admins, as a
-- removal or a lock is undone (moderate_post.lua) — not its author, by setPostLabels or
-- editPost, nor a moderator of another of the post's groups, perhaps one its author made. The
-- field goes with the label. Scripts that take labels off include it ("--!include
-- label_keeper").

-- label_kept returns the FORBIDDEN error reply that refuses to take the label field ("nsfw" or
-- "spoiler") off post p for an actor whose authority comes through via ("" for the post's
-- author, "*" for an admin, else a group), or nil when they may.
local function label_kept(p, field, via)
  if redis.call('HGET', p, field) ~= '1' then return nil end
  local by = redis.call('HGET', p, field .. 'Via')
  if not by or by == via or via == '*' then return nil end
  local label = field == 'nsfw' and 'NSFW' or 'spoiler'
  if by == '*' then
    return redis.error_reply('FORBIDDEN a site admin put the ' .. label .. ' label on: only the site admins may take it off')
  end
  return redis.error_reply('FORBIDDEN the ' .. label .. ' label was put on in group ' .. by ..
    ': only its moderators and the site admins may take it off')
end
