-- crawl.lua: crawl a web site breadth-first with a pool of fetcher
-- processes. Each fetcher blocks in http.get without holding a worker, so
-- a few Go workers keep many requests in flight.
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

-- fetcher gets URLs from the boss and answers each with a report.
function fetcher(boss, origin)
  while true do
    local url = process.receive()
    if url == false then return end
    -- pcall: a report even if something raises, or the boss would wait
    local ok, resp, err = pcall(get, url, {timeout = 10})
    if not ok then resp, err = nil, resp end
    if resp then
      process.send(boss, {url = url, status = resp.status, bytes = #resp.body, links = links(origin, resp.body)})
    else
      process.send(boss, {url = url, err = err})
    end
  end
end

function main(start, fetchers, max_pages)
  local origin = start and start:match("^(https?://[^/#?]+)")
  if not origin then
    error("usage: luarun scripts/crawl.lua URL [fetchers] [max_pages] (URL as http://host[:port]/path)", 0)
  end
  start = start:gsub("#.*", "")
  if start == origin then start = origin .. "/" end -- the page links to it as "/"
  fetchers, max_pages = tonumber(fetchers) or 16, tonumber(max_pages) or 100

  local me, idle = process.self(), {}
  for i = 1, fetchers do idle[i] = process.spawn("fetcher", me, origin) end
  local pool = {unpack(idle)}

  local queue, head, seen = {start}, 1, {[start] = true}
  local in_flight, sent, reports = 0, 0, {}
  local t0 = time.monotonic()
  while true do
    while queue[head] and idle[1] and sent < max_pages do
      process.send(table.remove(idle), queue[head])
      head, in_flight, sent = head + 1, in_flight + 1, sent + 1
    end
    if in_flight == 0 then break end
    local report, from = process.receive()
    in_flight = in_flight - 1
    idle[#idle + 1] = from
    reports[#reports + 1] = report
    for _, url in ipairs(report.links or {}) do
      if not seen[url] then
        seen[url] = true
        queue[#queue + 1] = url
      end
    end
  end
  for _, pid in ipairs(pool) do process.send(pid, false) end

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
    #reports, bytes, failed, #queue - head + 1, fetchers, time.monotonic() - t0))
end
