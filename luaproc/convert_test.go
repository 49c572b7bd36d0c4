package luaproc

import (
	"math"
	"testing"

	lua "github.com/luarun/luarun/lua"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luarun/luarun/serve"
)

func TestConvertRoundTrip(t *testing.T) {
	L := lua.NewState(lua.Options{SkipOpenLibs: true})
	defer L.Close()
	for _, v := range []any{
		nil, true, false, int64(0), int64(-5), int64(1 << 52), 0.5, -1e-300, math.Inf(1),
		"", "bin\x00\xff", []any{}, []any{int64(1), "two", []any{3.5}},
		map[string]any{"a": int64(1), "b c": []any{true}},
		map[any]any{int64(1): "x", int64(3): "y"}, map[any]any{true: "t", "s": int64(2)},
		map[any]any{2.5: "f", int64(7): map[string]any{"k": "v"}},
	} {
		got, err := toPayload(toLuaValue(L, v), "v")
		require.NoError(t, err)
		assert.Equal(t, v, got)
	}
}

func TestConvertRefusals(t *testing.T) {
	L := lua.NewState()
	defer L.Close()
	require.NoError(t, L.DoString(`
		cyc = {a = {}}; cyc.a.back = cyc
		fn = {items = {1, 2, {cb = print}}}
		ud = {u = newproxy and newproxy() or nil}
		th = {co = coroutine.create(function() end)}
		deep = {} ; local t = deep; for i = 1, 300 do t.x = {}; t = t.x end
	`))
	for name, want := range map[string]string{
		"cyc":  "msg.a.back: cyclic table cannot be sent",
		"fn":   "msg.items[3].cb: function cannot be sent",
		"th":   "msg.co: coroutine cannot be sent",
		"deep": "nested deeper than 200 tables",
	} {
		_, err := toPayload(L.GetGlobal(name), "msg")
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), want, name)
	}
	// a table shared twice (not a cycle) is copied twice
	require.NoError(t, L.DoString(`shared = {}; twice = {a = shared, b = shared}`))
	v, err := toPayload(L.GetGlobal("twice"), "msg")
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"a": []any{}, "b": []any{}}, v)
}

// FuzzConvertRoundTrip builds a Lua table from the fuzz input (a little
// program of table operations), converts it to a payload value, back into
// Lua, and again to a payload value: both payload values must be equal,
// and every number, string and key must survive.
func FuzzConvertRoundTrip(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6})
	f.Add([]byte("\x05\x05\x02a\x03\xff\x04\x00\x01"))
	f.Add([]byte{7, 7, 7, 1, 8, 2, 200, 3})
	f.Fuzz(func(t *testing.T, prog []byte) {
		L := lua.NewState(lua.Options{SkipOpenLibs: true})
		defer L.Close()
		v := buildLua(L, prog)
		p1, err := toPayload(v, "v")
		if err != nil {
			t.Fatalf("a table of plain values was refused: %v", err)
		}
		p2, err := toPayload(toLuaValue(L, p1), "v")
		require.NoError(t, err)
		require.Equal(t, p1, p2)
	})
}

// buildLua interprets prog: each byte picks an operation on a stack of
// open tables (push a value into the current table, open a nested table,
// close it).
func buildLua(L *lua.LState, prog []byte) lua.LValue {
	root := L.NewTable()
	stack := []*lua.LTable{root}
	next := 0
	arg := func() byte {
		if next < len(prog) {
			b := prog[next]
			next++
			return b
		}
		return 0
	}
	for next < len(prog) {
		cur := stack[len(stack)-1]
		switch op := arg() % 9; op {
		case 0:
			cur.Append(lua.LNumber(int8(arg())))
		case 1:
			cur.Append(lua.LNumber(float64(arg()) / 7))
		case 2:
			cur.Append(lua.LString([]byte{arg(), arg()}))
		case 3:
			cur.RawSetString(string([]byte{'k', arg()}), lua.LBool(arg()%2 == 0))
		case 4:
			cur.RawSetInt(int(arg())+1, lua.LString("i"))
		case 5, 6:
			if len(stack) < 20 {
				t := L.NewTable()
				cur.Append(t)
				stack = append(stack, t)
			}
		case 7:
			if len(stack) > 1 {
				stack = stack[:len(stack)-1]
			}
		case 8:
			cur.RawSet(lua.LNumber(float64(arg())+0.5), lua.LNumber(-1))
		}
	}
	return root
}

// A scalar message (messageValue's lua.LNumber, LString, LBool) becomes
// a Lua value without an allocation: the converter used to escape to
// the heap, 120 bytes for every message a process received.
func TestToLuaValueScalarNoAlloc(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	L := lua.NewState()
	defer L.Close()
	for _, v := range []any{lua.LNumber(7), lua.LString("hi"), lua.LTrue} {
		var got lua.LValue
		allocs := testing.AllocsPerRun(100, func() { got = toLuaValue(L, v) })
		require.Equal(t, v, got)
		require.Zero(t, allocs, "%v", v)
	}
}

// A message of scalars converts with the allocations its values need
// (the map and the boxed strings), none for the conversion's own
// bookkeeping: no key list, no sort, no error paths, no cycle map.
func TestConvertMessageAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	L := lua.NewState()
	defer L.Close()
	msg := L.CreateTable(0, 3)
	msg.RawSetString("op", lua.LString("get"))
	msg.RawSetString("key", lua.LString("some-key"))
	msg.RawSetString("n", lua.LNumber(3))
	var out any
	allocs := testing.AllocsPerRun(200, func() {
		v, err := toMoved(msg, "msg")
		if err != nil {
			t.Fatal(err)
		}
		out = v
	})
	require.Equal(t, map[string]any{"op": "get", "key": "some-key", "n": int64(3)}, out)
	// the map (header and group); the strings share their Lua boxes, and
	// a small number boxes for free
	require.LessOrEqual(t, allocs, 2.0)
}

// Converting into Lua costs only the values made: a number none (the
// converter itself stays on the stack).
func TestConvertToLuaAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	L := lua.NewState()
	defer L.Close()
	var out lua.LValue
	allocs := testing.AllocsPerRun(200, func() { out = toLuaValue(L, int64(5)) })
	require.Equal(t, lua.LValue(lua.LNumber(5)), out)
	require.Zero(t, allocs)
}

// A Go string (a message from another node, or from Go) becomes an
// LString without an allocation: it shares the header the message
// boxed already (boxing it again cost 16 bytes a message received).
func TestConvertGoStringToLuaAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	L := lua.NewState()
	defer L.Close()
	var msg any = string([]byte("a string from the wire"))
	var out lua.LValue
	allocs := testing.AllocsPerRun(200, func() { out = toLuaValue(L, msg) })
	require.Equal(t, lua.LValue(lua.LString("a string from the wire")), out)
	require.Zero(t, allocs)
}

// A Lua string sent to another node (or to an Inbox) becomes a payload
// string without an allocation: goValue shares the header the Lua value
// has boxed already (boxing it again cost 16 bytes a message sent).
func TestGoValueStringAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	var msg any = lua.LString(string([]byte("a string for the wire")))
	var out any
	allocs := testing.AllocsPerRun(200, func() { out = goValue(msg) })
	require.Equal(t, any("a string for the wire"), out)
	require.Zero(t, allocs)
}

// A handler's string result (an http.serve answer, a process's result)
// costs the result list alone: the payload string shares the header the
// Lua value boxed (boxing it again cost 16 bytes a request).
func TestResultStringAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	vals := []lua.LValue{lua.LString(string([]byte("hello world")))}
	var out []any
	allocs := testing.AllocsPerRun(200, func() {
		var err error
		if out, err = toPayloads(vals, resultPath); err != nil {
			t.Fatal(err)
		}
	})
	require.Equal(t, []any{"hello world"}, out)
	require.LessOrEqual(t, allocs, 1.0, "the list alone")
}

// An http.serve request's table costs its three tables alone, the
// request's own laid out from a Record: its strings are boxed where the
// Request holds them (a block of string headers cost one allocation
// more); and it holds what serve.Request.Table describes.
func TestRequestTableAllocs(t *testing.T) {
	L := lua.NewState(lua.Options{SkipOpenLibs: true})
	defer L.Close()
	r := &serve.Request{Method: "GET", Path: "/p", URL: "/p?a=1&a=2", Body: "b", Remote: "127.0.0.1:1",
		Query:   []serve.Field{{Name: "a", Value: "1"}, {Name: "a", Value: "2"}},
		Headers: []serve.Field{{Name: "host", Value: "h"}}}
	got, err := toPayloads([]lua.LValue{requestTable(L, r)}, resultPath)
	require.NoError(t, err)
	require.Equal(t, r.Table(), got[0])
	if raceEnabled {
		return // the race detector allocates
	}
	allocs := testing.AllocsPerRun(200, func() { requestTable(L, r) })
	require.LessOrEqual(t, allocs, 3.0)
}

// A command's arguments cost their list and their values, not a name for
// each: the names ("arg1") are only for errors (argPath).
func TestConvertArgsAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	L := lua.NewState()
	defer L.Close()
	L.Push(lua.LNumber(1))
	L.Push(lua.LNumber(2))
	var out []any
	allocs := testing.AllocsPerRun(200, func() { out = argPayloads(L, 1, "app.cmd") })
	require.Equal(t, []any{int64(1), int64(2)}, out)
	require.LessOrEqual(t, allocs, 1.0, "the list alone (small numbers box for free)")
	assert.Equal(t, []string{"arg1", "arg8", "arg9", "arg12"}, []string{argPath(0), argPath(7), argPath(8), argPath(11)})
}

// A Lua string becomes a payload string without an allocation (a
// command's string argument, a process's string result): the converter
// shares the header the Lua value has boxed already, as goValue does.
func TestConvertLuaStringAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	L := lua.NewState()
	defer L.Close()
	s := lua.LValue(lua.LString(string([]byte("a key from Lua"))))
	var out any
	allocs := testing.AllocsPerRun(200, func() { out, _ = toPayload(s, "arg1") })
	require.Equal(t, any("a key from Lua"), out)
	require.Zero(t, allocs)
	L.Push(s)
	var args []any
	allocs = testing.AllocsPerRun(200, func() { args = argPayloads(L, 1, "app.cmd") })
	require.Equal(t, []any{"a key from Lua"}, args)
	require.LessOrEqual(t, allocs, 1.0, "the list alone")
}
