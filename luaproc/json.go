package luaproc

import (
	"strings"
	"sync"
	"time"

	lua "github.com/luarun/luarun/lua"

	"github.com/luarun/luarun/payload"
)

// jsonNull is json.null: one value shared by every state. Its metatable
// is locked, so setmetatable cannot change it (a userdata has nothing
// else a script could write).
var jsonNull = &lua.LUserData{Value: "json.null", Metatable: lockedMT("json.null")}

// lockedMT is a metatable with only __metatable set: getmetatable answers
// name and setmetatable refuses to replace it.
func lockedMT(name string) *lua.LTable {
	mt := &lua.LTable{Metatable: lua.LNil}
	mt.RawSetString("__metatable", lua.LString(name))
	lockedMTs.Store(mt, true)
	return mt
}

// lockedMTs holds every metatable lockedMT made (isLuarunMT).
var lockedMTs sync.Map

// jsonObjectMT marks tables that encode as objects even when empty
// (json.object, and the empty objects json.decode makes). It is shared
// and locked: getmetatable on a marked table answers "json.object".
var jsonObjectMT = lockedMT("json.object")

// jsonConverter is json's converter; each value it converts is a step
// of L's interrupt budget (a kill stops a long encode or decode).
func jsonConverter(L *lua.LState) *converter {
	return &converter{null: jsonNull, objectMT: jsonObjectMT, ticker: L}
}

var jsonFuncs = map[string]lua.LGFunction{
	"encode": jsonEncode,
	"decode": jsonDecode,
	"object": jsonObject,
}

func jsonEncode(L *lua.LState) int {
	c := jsonConverter(L)
	v, err := c.toGo(L.CheckAny(1), "value", 0)
	if err == nil {
		var b []byte
		encode := func() ([]byte, error) { return payload.Encode(v) }
		if c.size > offThreadSize {
			b, err = offThread(L, encode)
		} else {
			b, err = encode()
		}
		if err == nil {
			L.Push(lua.LString(b))
			return 1
		}
	}
	L.Push(lua.LNil)
	L.Push(lua.LString("json.encode: " + err.Error()))
	return 2
}

func jsonDecode(L *lua.LState) int {
	s := L.CheckString(1)
	decode := func() (any, error) { return payload.Decode([]byte(s)) }
	var v any
	var err error
	if len(s) > offThreadSize {
		v, err = offThread(L, decode)
	} else {
		v, err = decode()
	}
	if err != nil {
		L.Push(lua.LNil)
		L.Push(lua.LString("json.decode: " + strings.TrimPrefix(err.Error(), "decode JSON: ")))
		return 2
	}
	L.Push(jsonConverter(L).toLua(L, v))
	return 1
}

// offThreadSize is the JSON text size (bytes) past which encoding or
// decoding it runs on a goroutine of its own (offThread): encoding/json
// takes a few milliseconds over this much, and cannot be interrupted.
const offThreadSize = 128 << 10

// offThread runs fn, which touches no Lua state, on a goroutine of its
// own and waits for it, so that a kill, step limit or shutdown stops the
// wait at once: the abandoned fn runs to its end and its result is
// dropped. The wait ends when L's context is done (a kill or shutdown
// cancels it: the cancel itself wakes the waiter) and checks L's
// interrupt every offThreadPoll for its other reasons (the watchdog's
// probe). It used to wait for the poll alone, and a woken timer waits
// for a processor: with the decode and the collector busy, kills were
// seen 20 to 250 ms late on a loaded 2-core machine (TestKillLatency).
// A Go panic in fn is panicked again on the caller's goroutine, where it
// would have happened.
func offThread[T any](L *lua.LState, fn func() (T, error)) (T, error) {
	var v T
	var err error
	var failed any
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() { failed = recover() }()
		v, err = fn()
	}()
	var cancelled <-chan struct{}
	if ctx := L.Context(); ctx != nil {
		cancelled = ctx.Done()
	}
	tick := time.NewTicker(offThreadPoll)
	defer tick.Stop()
	for {
		select {
		case <-done:
			if failed != nil {
				panic(failed)
			}
			return v, err
		case <-cancelled:
			cancelled = nil // raised below, or once its interrupt is set
			L.CheckInterrupt()
		case <-tick.C:
			L.CheckInterrupt()
		}
	}
}

// offThreadPoll is how often offThread checks L's interrupt while it
// waits (a variable for the tests).
var offThreadPoll = time.Millisecond

// jsonObject marks t (or a new table) to encode as an object.
func jsonObject(L *lua.LState) int {
	t := L.OptTable(1, L.CreateTable(0, 0))
	t.Metatable = jsonObjectMT
	L.Push(t)
	return 1
}
