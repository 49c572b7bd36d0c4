-- crawl.lua: crawl a web site breadth-first with pool.map: each page is
-- fetched by a process of its own, at most `fetchers` at once. Each blocks
-- in http.get without holding a worker, so a few Go workers keep many
-- requests in flight.
--
--   luarun scripts/crawl.lua URL [fetchers] [max_pages]   (default 16, 100)
--
-- It follows href="..." links that stay on URL's scheme://host:port,
-- fetches each page once, and prints one line per page in URL order:
-- status (or "error"), size in bytes and the URL, then a summary line.

-- Read once by every process's chunk: under --sandbox this line is where
-- the main process stops, with "http is not allowed ...".
local get = http.get

-- links returns the absolute same-origin URLs that body links to, each
-- without its #fragment (page#a and page#b are one page).
local function links(origin, body)
  local out = {}
  for href in body:gmatch('href="([^"]*)"') do
    href = href:gsub("#.*", "")
    if href:sub(1, 1) == "/" then href = origin .. href end
    if href:sub(1, #origin + 1) == origin .. "/" then out[#out + 1] = href end
  end
  return out
end

-- fetch gets one page and reports on it (a failure raised is pool.map's
-- error for that page).
function fetch(url, origin)
  local resp, err = get(url, {timeout = 10})
  if not resp then return {url = url, err = err} end
  return {url = url, status = resp.status, bytes = #resp.body, links = links(origin, resp.body)}
end

function main(start, fetchers, max_pages)
  local origin = start and start:match("^(https?://[^/#?]+)")
  if not origin then
    error("usage: luarun scripts/crawl.lua URL [fetchers] [max_pages] (URL as http://host[:port]/path)", 0)
  end
  start = start:gsub("#.*", "")
  if start == origin then start = origin .. "/" end -- the page links to it as "/"
  fetchers, max_pages = tonumber(fetchers) or 16, tonumber(max_pages) or 100

  -- breadth-first, a level at a time: each level's pages fetched by pool.map
  local level, seen, nseen, reports = {start}, {[start] = true}, 1, {}
  local t0 = time.monotonic()
  while level[1] and #reports < max_pages do
    local pages = {unpack(level, 1, math.min(#level, max_pages - #reports))}
    local results, errors = pool.map("fetch", pages, {concurrency = fetchers, args = {origin}})
    level = {}
    for i, url in ipairs(pages) do
      local report = results[i] or {url = url, err = errors[i]}
      reports[#reports + 1] = report
      for _, link in ipairs(report.links or {}) do
        if not seen[link] then
          seen[link], nseen, level[#level + 1] = true, nseen + 1, link
        end
      end
    end
  end

  table.sort(reports, function(a, b) return a.url < b.url end)
  local failed, bytes = 0, 0
  for _, r in ipairs(reports) do
    if r.err then
      failed = failed + 1
      print(string.format("error %s: %s", r.url, r.err))
    else
      bytes = bytes + r.bytes
      print(string.format("%d %7d %s", r.status, r.bytes, r.url))
    end
  end
  print(string.format("crawled %d pages (%d bytes, %d failed, %d links not followed) with %d fetchers in %.2f s",
    #reports, bytes, failed, nseen - #reports, fetchers, time.monotonic() - t0))
end
