-- page_window: what the page scripts share (page.lua, unread_page.lua; "--!include page_window").

-- before says whether string a sorts before b as memcmp compares them, which Redis uses for ties
-- of score; Lua's < follows the locale.
local function before(a, b)
  local n = math.min(#a, #b)
  for i = 1, n do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then return x < y end
  end
  return #a < #b
end

-- page_span returns the positions [start, stop) of a page of limit items within the window of
-- positions [lo, hi): its first items, or with last its last ones.
local function page_span(lo, hi, limit, last)
  if hi < lo then hi = lo end
  if last then return math.max(hi - limit, lo), hi end
  return lo, math.min(lo + limit, hi)
end
