---@meta luarun
-- Definitions of luarun's built-in modules for the Lua language server
-- (LuaLS, sumneko): completion and type checks of process., fs. etc. in
-- an editor. Point the language server at this folder (see the README):
--
--   .luarc.json: { "runtime.version": "Lua 5.1",
--                  "workspace.library": ["<luarun>/docs/luals"] }
--
-- It is declarations only; luarun never runs it. docs/lua-api.md is the
-- reference; luaproc/docs_test.go fails when a function the runtime
-- registers is missing here.

---A process identifier: an integer, never reused in a run.
---@alias luarun.pid integer

---A value that can cross a process boundary: nil, boolean, number, string,
---json.null, or a table of those (no functions, coroutines or cycles).
---@alias luarun.value nil|boolean|number|string|table|userdata

-- process ---------------------------------------------------------------

---Processes: spawn, message, wait, kill.
process = {}

---This process's PID.
---@return luarun.pid
function process.self() end

---Start a process running `entry` of this script with copies of the
---arguments. Returns nil and a message when the script is known not to
---have `entry`. Raises when called from the top level of a spawned process.
---@param entry string
---@param ... luarun.value
---@return luarun.pid|nil pid
---@return string? err
function process.spawn(entry, ...) end

---Start a process running `entry` (nil: `main`, or the chunk) of the
---script at `path` (relative to this script's directory first).
---@param path string
---@param entry? string
---@param ... luarun.value
---@return luarun.pid|nil pid
---@return string? err
function process.spawn_file(path, entry, ...) end

---Start a process of the script at `path` on the node called `node`
---(the script is sent there): its PID, or nil and an error. Yields.
---@param node string
---@param path string
---@param entry? string
---@param ... luarun.value
---@return luarun.pid|nil pid
---@return string? err
function process.spawn_on(node, path, entry, ...) end

---Queue a copy of `msg` for `pid` (or a registered name). Never blocks.
---@param pid luarun.pid|string
---@param msg luarun.value
---@return true|nil ok
---@return string? err
function process.send(pid, msg) end

---@alias luarun.kind "message"|"call"|"down"|"exit"

---@class luarun.receive.options
---@field match fun(msg: any, from: luarun.pid, kind: luarun.kind): boolean
---@field timeout? number

---The next message, its sender and its kind (and a call's handle), or the
---first that `match` accepts when given a table; nil, "timeout" after
---`timeout` seconds. Yields.
---@param timeout? number|luarun.receive.options
---@return luarun.value msg
---@return luarun.pid|string from
---@return luarun.kind? kind
---@return userdata? call
function process.receive(timeout) end

---A PID, or a registered name.
---@alias luarun.target luarun.pid|string

---Be told (a "down" event) when `target` ends. Returns the reference.
---@param target luarun.target
---@return integer ref
function process.monitor(target) end

---No down event for `ref` after this returns.
---@param ref integer
---@return boolean
function process.demonitor(ref) end

---Link this process and `target`: a failure of either ends the other.
---@param target luarun.target
---@return true
function process.link(target) end

---Remove the link, both ways.
---@param target luarun.target
---@return true
function process.unlink(target) end

---Take linked processes' ends (and the shutdown) as "exit" events.
---@param on boolean
---@return boolean previous
function process.trap_exits(on) end

---spawn and link in one step.
---@param entry string
---@param ... luarun.value
---@return luarun.pid|nil pid
---@return string? err
function process.spawn_link(entry, ...) end

---spawn and monitor in one step: the PID and the reference.
---@param entry string
---@param ... luarun.value
---@return luarun.pid|nil pid
---@return integer|string ref_or_err
function process.spawn_monitor(entry, ...) end

---Give `pid` (default: this process) a name (in a cluster: in the whole
---cluster, and then it yields).
---@param name string
---@param pid? luarun.pid
---@return true|nil ok
---@return string? err
function process.register(name, pid) end

---Release a name.
---@param name string
---@return boolean
function process.unregister(name) end

---The PID registered under `name`, or nil.
---@param name string
---@return luarun.pid|nil
function process.whereis(name) end

---Send `msg` as a call and wait for the reply (nil, err: "timeout", or
---the target ended). Yields.
---@param target luarun.target
---@param msg luarun.value
---@param timeout? number seconds, default 5
---@return luarun.value|nil reply
---@return string? err
function process.call(target, msg, timeout) end

---Answer a call (the fourth value of receive).
---@param call userdata
---@param value luarun.value
---@return true|nil ok
---@return string? err
function process.reply(call, value) end

---Send `msg` to `target` after `seconds`. Returns a timer id.
---@param seconds number
---@param target luarun.target
---@param msg luarun.value
---@return integer id
function process.send_after(seconds, target, msg) end

---Cancel a timer of send_after: true if it had not fired.
---@param id integer
---@return boolean
function process.cancel_timer(id) end

---This node's name ("local" without --cluster).
---@return string
function process.node() end

---The names of the nodes that are up, this one's included, sorted.
---@return string[]
function process.nodes() end

---Wait for `pid` to end: true and its results, false and its error, or
---nil, "timeout". Yields.
---@param pid luarun.pid
---@param timeout? number
---@return boolean|nil ok
---@return any ...
function process.wait(pid, timeout) end

---Cancel `pid`: it ends with the error "killed: <reason>".
---@param pid luarun.pid
---@param reason? string
---@return true|nil ok
---@return string? err
function process.kill(pid, reason) end

---Run the functions concurrently in this process; their first results,
---in order. Raises the first error after all have finished. Yields.
---@param ... fun(): any
---@return any ...
function process.all(...) end

---The same as time.sleep. Yields.
---@param seconds number
function process.sleep(seconds) end

-- supervisor ------------------------------------------------------------

---Supervisors: processes that start children and restart them.
supervisor = {}

---@class luarun.supervisor.child
---@field name? string registered while it runs
---@field entry? string an entry of this script (or of file)
---@field file? string another script
---@field args? luarun.value[]
---@field restart? "permanent"|"transient"|"temporary"
---@field supervisor? luarun.supervisor.spec a supervisor as a child

---@class luarun.supervisor.spec
---@field strategy? "one_for_one"|"one_for_all"|"rest_for_one"
---@field intensity? number restarts allowed within period (default 3)
---@field period? number seconds (default 5)
---@field children luarun.supervisor.child[]

---Start a supervisor linked to the caller; its PID once its children run.
---@param spec luarun.supervisor.spec
---@return luarun.pid
function supervisor.start(spec) end

---The children: {name=, pid=, restarts=} in start order.
---@param sup luarun.pid
---@return {name: string, pid: luarun.pid?, restarts: integer}[]|nil
---@return string? err
function supervisor.which_children(sup) end

---Stop the children (last first), then the supervisor.
---@param sup luarun.pid
---@return true|nil
---@return string? err
function supervisor.stop(sup) end

-- time ------------------------------------------------------------------

---Clocks and sleeping.
time = {}

---Suspend this process (not the worker). Yields.
---@param seconds number
function time.sleep(seconds) end

---Wall-clock seconds since the Unix epoch.
---@return number
function time.now() end

---Monotonic seconds, for intervals.
---@return number
function time.monotonic() end

-- log -------------------------------------------------------------------

---Structured lines on stderr, tagged with the PID.
log = {}

---@param msg string
---@param ... any key, value pairs
function log.debug(msg, ...) end

---@param msg string
---@param ... any key, value pairs
function log.info(msg, ...) end

---@param msg string
---@param ... any key, value pairs
function log.warn(msg, ...) end

---@param msg string
---@param ... any key, value pairs
function log.error(msg, ...) end

-- json ------------------------------------------------------------------

---JSON text and values.
json = {}

---The JSON text of `value`, or nil and a message.
---@param value any
---@return string|nil text
---@return string? err
function json.encode(value) end

---The value of JSON `text`, or nil and a message.
---@param text string
---@return any value
---@return string? err
function json.decode(text) end

---Mark `t` (or a new table) to encode as an object even when empty.
---@param t? table
---@return table
function json.object(t) end

---JSON null.
---@type userdata
json.null = nil

-- package ---------------------------------------------------------------

---@class luarun.package
---@field path string templates of require's file search, ';'-separated
---@field cpath string always "" (no C modules)
---@field config string Lua 5.1's separators
---@field loaded table<string, any> modules this process has loaded
---@field preload table<string, fun(name: string): any> loaders by name, searched first
---@field loaders (fun(name: string): any)[] the searchers require tries

---@type luarun.package
package = {}

-- fs (permission fs) ----------------------------------------------------

---Files, off the workers. Every call yields.
fs = {}

---The file's contents, or nil and a message.
---@param path string
---@return string|nil data
---@return string? err
function fs.read(path) end

---Replace the file with `data`, atomically.
---@param path string
---@param data string
---@return true|nil ok
---@return string? err
function fs.write(path, data) end

---The names in a directory, sorted.
---@param dir string
---@return string[]|nil names
---@return string? err
function fs.list(dir) end

---@class luarun.file
local file = {}
---@param ... string|integer formats: "l", "L", "a", "n", a count
---@return any ...
function file:read(...) end
---@param ... string|number
---@return luarun.file|nil self
---@return string? err
function file:write(...) end
---@return fun(): string?
function file:lines() end
---@param whence? "set"|"cur"|"end"
---@param offset? integer
---@return integer|nil position
---@return string? err
function file:seek(whence, offset) end
---@return true|nil ok
---@return string? err
function file:close() end

---Open a file; a handle whose methods block, as fs.read does.
---@param path string
---@param mode? "r"|"w"|"a"|"r+"|"w+"|"a+"
---@return luarun.file|nil file
---@return string? err
function fs.open(path, mode) end

---The lines of a file, for a generic for (about 64 KB held at a time).
---@param path string
---@return fun(): string?
function fs.lines(path) end

---@class luarun.fs.stat
---@field size integer bytes
---@field mtime number seconds since 1970
---@field is_dir boolean
---@field mode integer the permission bits

---Size, modification time, kind and permission bits of a file.
---@param path string
---@return luarun.fs.stat|nil stat
---@return string? err
function fs.stat(path) end

---Make a directory (with `parents`, the missing ones above it too).
---@param path string
---@param parents? boolean
---@return true|nil ok
---@return string? err
function fs.mkdir(path, parents) end

---Remove a file or an empty directory.
---@param path string
---@return true|nil ok
---@return string? err
function fs.remove(path) end

---Rename a file or directory.
---@param from string
---@param to string
---@return true|nil ok
---@return string? err
function fs.rename(from, to) end

---Add data at the end of a file, made if it is not there.
---@param path string
---@param data string
---@return true|nil ok
---@return string? err
function fs.append(path, data) end

-- http (permission http) ------------------------------------------------

---HTTP requests, off the workers. Every call yields.
http = {}

---@class luarun.http.response
---@field status integer
---@field body string
---@field headers table<string, string> names lowercased
---@field url string the URL the response came from, after redirects

---@class luarun.http.options
---@field headers? table<string, string>
---@field timeout? number seconds (default 30; math.huge: none)
---@field follow_redirects? boolean|integer true (default: up to 10), false (a 3xx is the response), or how many

---@class luarun.http.request: luarun.http.options
---@field method? string default "GET"
---@field url string
---@field body? string

---@param url string
---@param opts? luarun.http.options
---@return luarun.http.response|nil resp
---@return string? err
function http.get(url, opts) end

---@param req luarun.http.request
---@return luarun.http.response|nil resp
---@return string? err
function http.request(req) end

---@class luarun.http.serve_options
---@field timeout? number seconds a handler may run (default 30); past it: killed, 503
---@field max_body? integer bytes (default 8 MB); larger: 413
---@field max_header_bytes? integer (default 1 MB); larger: 431
---@field read_timeout? number seconds to read a request (default 30)
---@field idle_timeout? number seconds a keep-alive connection may idle (default 120)
---@field max_concurrent? integer requests at once; beyond: 503
---@field tls? {cert: string, key: string} PEM files

---@class luarun.http.server
---@field addr string the address it listens on
local server = {}

---Stop accepting, let the requests in flight finish; true once they have.
---@return true
function server:close() end

---@class luarun.http.serve_request
---@field method string
---@field path string
---@field url string the raw request URI
---@field query table<string, string>
---@field headers table<string, string> names lowercased
---@field body string
---@field remote string "ip:port"

---Serve HTTP/1.1 (permission listen): each request runs as a new process
---of entry with the request; its return value (a string, or
---{status=, headers=, body=}) is the response.
---@param addr string
---@param entry string
---@param opts? luarun.http.serve_options
---@return luarun.http.server|nil srv
---@return string? err
function http.serve(addr, entry, opts) end

-- net (permissions listen, net) ------------------------------------------

---TCP listeners and connections. Accepts, reads and writes yield.
net = {}

---@class luarun.net.listener
---@field addr string
local listener = {}

---@param timeout? number seconds
---@return luarun.net.conn|nil c
---@return string? err "timeout", "closed" or "moved"
function listener:accept(timeout) end

---@return true
function listener:close() end

---@class luarun.net.conn
---@field remote string
---@field local string
local conn = {}

---@param fmt? "l"|"L"|"a"|integer
---@return string|nil data
---@return string? err "closed", "timeout" or "moved"
function conn:read(fmt) end

---@param ... string|number
---@return true|nil ok
---@return string? err
function conn:write(...) end

---@param seconds number|nil nil or negative: none
---@return true
function conn:settimeout(seconds) end

---@return true
function conn:close() end

---A listener (permission listen).
---@param addr string
---@return luarun.net.listener|nil l
---@return string? err
function net.listen(addr) end

---A connection (permission net).
---@param addr string
---@param timeout? number seconds
---@return luarun.net.conn|nil c
---@return string? err
function net.connect(addr, timeout) end

-- exec (permission exec) ------------------------------------------------

---Programs, run without a shell, off the workers. Every call yields.
exec = {}

---@class luarun.exec.result
---@field code integer
---@field stdout string
---@field stderr string

---@class luarun.exec.options
---@field stdin? string
---@field dir? string
---@field timeout? number seconds
---@field env? table<string, string|false> variables added to luarun's environment (false removes one)
---@field clear_env? boolean start from an empty environment

---@param cmd string
---@param args? string[]
---@param opts? luarun.exec.options
---@return luarun.exec.result|nil result
---@return string? err
---@return {stdout: string, stderr: string}? partial what it wrote before a timeout killed it
function exec.run(cmd, args, opts) end

---@class luarun.exec.handle
local exec_handle = {}
---@return fun(): string?
function exec_handle:lines() end
---@param s string
---@return luarun.exec.handle|nil
---@return string? err
function exec_handle:write(s) end
---@return boolean
function exec_handle:close_stdin() end
---@return luarun.exec.result|nil result
---@return string? err
function exec_handle:wait() end
---@return boolean
function exec_handle:kill() end

---@class luarun.exec.start_options
---@field dir? string
---@field env? table<string, string|false>
---@field clear_env? boolean

---@param cmd string
---@param args? string[]
---@param opts? luarun.exec.start_options
---@return luarun.exec.handle|nil handle
---@return string? err
function exec.start(cmd, args, opts) end

---Runs an entry on many items in processes of their own.
pool = {}

---@class luarun.pool.options
---@field concurrency? integer at most this many at once (default 8)
---@field args? any[] passed to each call after the item
---@field on_result? fun(i: integer, result: any, err: any) called as each item ends

---@param entry string a global function's name
---@param items any[]
---@param opts? luarun.pool.options
---@return table results results[i], nil where the item failed
---@return table<integer, any>? errors nil when every item succeeded
function pool.map(entry, items, opts) end

---A value written as Lua would write it (keys sorted, cycles marked).
---@param v any
---@param opts? {depth?: integer}
---@return string
function inspect(v, opts) end
