// Package luaproc runs Lua scripts as lightweight processes, and is the
// API a Go application uses to embed luarun as its scripting layer.
//
// Each process is a gopher-lua state whose code runs in coroutines; every
// blocking call (time.sleep, process.receive, process.wait, a command the
// application registered) yields, so a handful of scheduler workers run
// thousands of processes. The Lua API is docs/lua-api.md; this page is the Go
// side.
//
// # Embedding in a few lines
//
//	rt, err := luaproc.New(luaproc.Options{Workers: 4, Allow: []string{"os"}, Logger: slog.Default()})
//	defer rt.Shutdown(ctx)                          // cancels and waits, until ctx's deadline
//
//	rt.Register("db.query", func(c luaproc.Call) error {
//		go func() { c.Complete(rows) }() // later, from any goroutine
//		return nil
//	})
//	script, err := rt.LoadFile("app.lua")            // compiled once, shared by every process
//	results, err := rt.Call(reqCtx, script, "main", "arg1", int64(2)) // on this goroutine; reqCtx's end kills it
//
//	h, err := rt.Start(ctx, script, "main")         // or on the workers, in the background
//	results, err = h.Wait(ctx)                      // the entry's return values
//
// Lua calls the command as db.query(sql, args): the call yields its
// process, the handler runs on the worker's goroutine and must return at
// once; the Lua call returns the values Complete delivered
// (c.Complete(rows) one, c.Complete(nil, "not found") two) or nil and
// the message of the error Fail delivered (or the handler returned, or
// its panic).
//
// Call and Start's context is the process's parent: its values are in
// the context of every command the process calls (Call.Ctx), and its end
// kills the process (a request's process dies with the request).
//
// Call is the way to run a process per request: it runs the process on
// the calling goroutine (an HTTP handler's) until it ends, and while the
// process waits for a command's answer, a message or a timer, the
// goroutine waits with it and runs it again when the answer comes — no
// worker hand-off in between. Start runs the process on the workers and
// returns at once: for processes that outlive the call that starts them
// (a pool, a supervisor), or that the caller will not wait for.
//
// This package is the whole embedding API: PID, Handle, Handler, Call,
// Stats and the errors are luaproc's, so an application imports nothing
// else of luarun's. The scheduler underneath (package scheduler) stays
// importable for those who want more (Runtime.SchedulerStats has its
// counters), never required.
//
// Mistakes are errors from the call that made them: an option out of
// range or an unknown permission (New), a command or module registered
// twice (Register, RegisterGoModule, RegisterLuaModule), and any of
// those, Start or NewInbox after Shutdown (ErrClosed).
//
// To exchange messages with processes, make an Inbox: Lua sends to its
// PID with process.send, Go reads with Receive and answers with Send
// (Runtime.Send sends from PID 0, which Lua cannot answer).
//
// # Values
//
// Everything that crosses a process boundary — arguments, results,
// messages, command arguments and results — is a payload value (nil,
// bool, int64, float64, string, []byte, []any, map[string]any,
// map[any]any) and is deep-copied. What Go gives (Start's arguments,
// Send's and an Inbox's messages and replies, Complete's results, a Go
// function's results) is converted by one table, payload.FromGo's: any
// integer or float kind, strings, []byte, slices and arrays, maps,
// structs through their json tags, pointers, time.Time (an RFC 3339
// string), marshalers, errors; a value with no Lua form (a channel, a
// func, a complex number, a cycle, an integer a Lua number would round)
// is an error naming its path ("start app: arg1.items[3].cb: func()
// cannot be sent"), never a string. A command's result that has none
// makes the Lua call return nil and that error. From Lua, integral
// numbers become int64, tables with keys 1..n lists, tables with string
// keys map[string]any, other tables map[any]any, and an empty table an
// empty list. Functions, userdata, coroutines and cycles are refused
// with the value's path ("msg.items[3].cb: function cannot be sent").
//
// # Errors
//
// A process ends with the entry point's return values, or with one of:
//
//   - *ScriptError: a Lua error, with "file:line: message" and, when it was
//     raised in the process's own coroutine, the Lua traceback;
//   - *EntryError: the entry point does not exist (it lists those that do);
//   - *KilledError: Kill or process.kill ended it (with the reason), or
//     the end of the context Start was given (its Cause is the context's);
//   - ErrShutdown (Shutdown cancelled it) or ErrAbandoned (it still ran
//     at Shutdown's deadline).
//
// A script that does not compile is a *SyntaxError from LoadFile or
// LoadString ("file:line: message"). A Go panic inside gopher-lua or in a
// Go function called from Lua ends only its process, as a *ScriptError.
//
// # Blocking calls everywhere
//
// gopher-lua cannot yield across a Go→Lua call, and its pcall, xpcall and
// coroutine.resume are such calls. luarun replaces them with versions that
// run the function in a coroutine of their own and pass blocking calls
// outward, so time.sleep works inside pcall, xpcall, process.all and
// coroutines the script creates. Where a yield is impossible — inside a
// metamethod, a table.sort comparator, a generic-for iterator function or
// a Go callback such as string.gsub's — the call raises
// "time.sleep: cannot block inside a metamethod" (or sort comparator, for
// iterator, Go function) instead of corrupting the coroutine. Values a
// resumed call receives are padded with nils to what the call site wants.
//
// # Entry points
//
// A process runs the script's chunk, then its entry point: a function of
// the table the chunk returns, or else a global function the script
// defined. Entry "" means main, or, if there is none, the chunk alone is
// the program (its results are the process's results when they can be
// sent, and are dropped otherwise). Because the chunk runs on a worker in
// the process's first step (it may block or loop), an unknown entry point
// is reported as the process's *EntryError, not by Start.
//
// The chunk is module initialisation, run again in every process. A
// process spawned from Lua may not spawn while its chunk runs (the error
// says so); processes started with Start may. Once a script's chunk has
// run to its end, its entries are known and process.spawn of one it does
// not have returns nil and the *EntryError's message.
//
// # Modules
//
// require works as in Lua 5.1: package.preload, then the application's
// Lua modules (RegisterLuaModule), then files on package.path — by
// default "<dir>/?.lua;<dir>/?/init.lua", <dir> being the directory of
// the script Start was given; Options.LuaPath replaces it (";;" stands
// for the default). A file is compiled once per Runtime (Stats counts
// compiles; again if it changed when a process requires it again after
// clearing package.loaded[name]) and run once per process that requires
// it.
// Built-in modules, commands (Register) and Go modules (RegisterGoModule)
// are globals, and require returns them after the files (a program's own
// json.lua wins over luarun's json; require("luarun.json") is luarun's).
//
// # Permissions
//
// Processes always get base, string, table, math and coroutine, and the
// luarun modules process, time, log and json. os, io and the I/O
// commands fs, http and exec (package commands; dofile and loadfile count
// as "fs") work only when Options.Allow names them; otherwise using them
// raises "os is not allowed (run without --sandbox or with --allow os)".
// Serving (package serve) has two permissions of its own: "listen" for
// http.serve and net.listen, "net" for net.connect; the functions are
// there without them and raise when called. Permissions() lists the
// names; New refuses any other. Shutdown drains the servers
// (their requests in flight finish) before it cancels the processes.
// Without "fs", process.spawn_file and require load only files inside the
// program's directory (that of the script Start was given; symbolic links
// resolved). Shutdown closes the idle HTTP connections.
//
// # Shared built-ins
//
// Every process of a Runtime shares one copy of the built-in functions
// (see state.go), so a process costs about 11 KB and starts in tens of
// microseconds. What a script can observe of that:
//
//   - _G and the module tables (string, math, process...) start empty and
//     read through a locked metatable: pairs(_G) and pairs(string) list
//     only what the script itself set, rawget(string, "format") is nil,
//     getmetatable answers "locked", and setmetatable(_G, ...) fails.
//   - Assigning to a module field (string.trim = f) works, in this process
//     only; string methods ("x"):upper() always come from the built-in
//     string library.
//   - getfenv of a built-in answers the process's own globals; setfenv on
//     one fails.
//
// # Concurrency and cost
//
// A process's coroutines never run on two goroutines at once; any worker
// may resume a suspended process. A CPU-bound Lua loop holds its worker
// until it blocks (gopher-lua has no preemption); the scheduler's
// watchdog then runs the other processes elsewhere, Options.MaxStep
// kills such a loop, and Kill and Shutdown stop it at once: every
// coroutine checks the process's interrupt flag between instructions.
// Options.MaxMailbox and MaxProcs bound what a script can take; os.exit
// calls Options.Exit.
// process.spawn keeps a handle to each child so process.wait works after
// the child ended; a handle is released when a wait observes the end.
// Timers (time.sleep, receive timeouts) hold no goroutine while waiting;
// process.wait on a running process holds one.
package luaproc
