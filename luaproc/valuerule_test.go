package luaproc

// Tests of the value rule (payload.FromGo's table) through each way a Go
// value reaches Lua — Start's arguments, a command's Complete, Send —
// and back; of each refusal on each of those ways; and of what Go
// receives from Lua (a process's result, a message, a command's
// arguments).

import (
	"context"
	"errors"
	"math"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luarun/luarun/payload"
	"github.com/luarun/luarun/scheduler"
)

// showLua defines show(v): a Lua value as text, keys sorted, so a test
// can say what Lua saw.
const showLua = `
local function show(v)
	if v == json.null then return "json.null" end
	if type(v) == "string" then return string.format("%q", v) end
	if type(v) ~= "table" then return tostring(v) end
	local keys = {}
	for k in pairs(v) do keys[#keys + 1] = k end
	table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
	local parts = {}
	for _, k in ipairs(keys) do parts[#parts + 1] = "[" .. show(k) .. "]=" .. show(v[k]) end
	return "{" .. table.concat(parts, ",") .. "}"
end
`

type ruleRow struct {
	ID      int               `json:"id"`
	Name    string            `json:"name,omitempty"`
	Note    string            `json:"note,omitempty"`
	Secret  string            `json:"-"`
	Labels  map[string]string `json:"labels"`
	private int
}

type ruleCase struct {
	name   string
	in     any
	lua    string // show(v) in Lua
	back   any    // what Lua's value is in Go again
	noSend bool   // nil: not a message
}

func ruleCases() []ruleCase {
	when := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	return []ruleCase{
		{name: "nil", in: nil, lua: "nil", back: nil, noSend: true},
		{name: "bool", in: true, lua: "true", back: true},
		{name: "int", in: 5, lua: "5", back: int64(5)},
		{name: "uint16", in: uint16(65535), lua: "65535", back: int64(65535)},
		{name: "int64 2^60 (exact)", in: int64(1 << 60), lua: "1.1529215046068e+18", back: int64(1 << 60)},
		{name: "float32", in: float32(0.25), lua: "0.25", back: 0.25},
		{name: "integral float", in: 2.0, lua: "2", back: int64(2)},
		{name: "string", in: "s\x00", lua: `"s\000"`, back: "s\x00"},
		{name: "[]byte", in: []byte("ab"), lua: `"ab"`, back: "ab"},
		{name: "[]string", in: []string{"a", "b"}, lua: `{[1]="a",[2]="b"}`, back: []any{"a", "b"}},
		{name: "nil slice", in: []int(nil), lua: "{}", back: []any{}},
		{name: "array", in: [2]float64{1.5, 2}, lua: "{[1]=1.5,[2]=2}", back: []any{1.5, int64(2)}},
		{name: "[]map[string]any", in: []map[string]any{{"id": 1}}, lua: `{[1]={["id"]=1}}`,
			back: []any{map[string]any{"id": int64(1)}}},
		{name: "empty map", in: map[string]int{}, lua: "{}", back: map[string]any{}},
		{name: "map[int] 1..n", in: map[int]string{1: "a", 2: "b"}, lua: `{[1]="a",[2]="b"}`, back: []any{"a", "b"}},
		{name: "map[int] sparse", in: map[int]string{2: "b"}, lua: `{[2]="b"}`, back: map[any]any{int64(2): "b"}},
		{name: "map[bool]", in: map[bool]int{true: 1}, lua: "{[true]=1}", back: map[any]any{true: int64(1)}},
		{name: "struct", in: ruleRow{ID: 3, Note: "", Secret: "x", Labels: map[string]string{"k": "v"}, private: 1},
			lua: `{["id"]=3,["labels"]={["k"]="v"}}`, back: map[string]any{"id": int64(3), "labels": map[string]any{"k": "v"}}},
		{name: "pointer, nil map", in: &ruleRow{ID: 4, Name: "n"}, lua: `{["id"]=4,["labels"]={},["name"]="n"}`,
			back: map[string]any{"id": int64(4), "name": "n", "labels": map[string]any{}}},
		{name: "nil pointer", in: (*ruleRow)(nil), lua: "nil", back: nil, noSend: true},
		{name: "time.Time", in: when, lua: `"2026-01-02T03:04:05.000000006Z"`, back: "2026-01-02T03:04:05.000000006Z"},
		{name: "time.Duration", in: 2 * time.Second, lua: "2000000000", back: int64(2e9)},
		{name: "PID", in: scheduler.PID(42), lua: "42", back: int64(42)},
		{name: "error", in: errors.New("e"), lua: `"e"`, back: "e"},
		{name: "TextMarshaler", in: net.IPv4(10, 0, 0, 1), lua: `"10.0.0.1"`, back: "10.0.0.1"},
		{name: "json.null", in: payload.Null, lua: "json.null", back: payload.Null},
	}
}

// TestValueRuleFromGo: each row of the table, as a process's argument, a
// command's result and a message: what Lua sees, and what comes back.
func TestValueRuleFromGo(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{})
	cases := ruleCases()
	require.NoError(t, rt.Register("conv.get", func(c Call) error {
		i := c.Args[0].(int64)
		go c.Complete(cases[i].in) // later, from another goroutine
		return nil
	}))
	s, err := rt.LoadString("rule.lua", showLua+`
		function main(i, v, send)
			local r = conv.get(i)
			local m = send and process.receive() or nil
			return show(v), show(r), show(m), v, r, m
		end`)
	require.NoError(t, err)
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h, err := rt.Start(context.Background(), s, "main", i, c.in, !c.noSend)
			require.NoError(t, err)
			if !c.noSend {
				require.NoError(t, rt.Send(h.PID(), c.in))
			}
			res := waitFor(t, h)
			want := c.lua
			if c.noSend {
				res[2], res[5], want = "nil", c.back, "nil"
			}
			assert.Equal(t, payload.Payloads{c.lua, c.lua, want, c.back, c.back, c.back}, padded(res, 6))
		})
	}
}

// padded is res with trailing nils put back (a process's results end at
// its last non-nil value).
func padded(res payload.Payloads, n int) payload.Payloads {
	for len(res) < n {
		res = append(res, nil)
	}
	return res
}

func waitFor(t *testing.T, h Handle) payload.Payloads {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := h.Wait(ctx)
	require.NoError(t, err)
	return res
}

// TestValueRuleRefusals: a value with no Lua form is an error from the
// call that gave it, naming its path — never a string in Lua.
func TestValueRuleRefusals(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{})
	results := map[string]any{
		"complex":  complex(1, 2),
		"nested":   payload.Payloads{true, map[string]any{"rows": []any{struct{ C chan int }{}}}},
		"inexact":  payload.Payloads{int64(1<<53 + 1)},
		"intkey":   map[any]any{1<<53 + 1: "x"},
		"deepint":  map[string]any{"n": []any{-(1<<53 + 1)}},
		"func key": payload.Payloads{map[any]any{"k": func() {}}},
	}
	require.NoError(t, rt.Register("conv.bad", func(c Call) error {
		if several, ok := results[c.Args[0].(string)].(payload.Payloads); ok {
			c.Complete(several...)
		} else {
			c.Complete(results[c.Args[0].(string)])
		}
		return nil
	}))
	require.NoError(t, rt.RegisterGoModule("gomod", map[string]Func{
		"bad": func([]any) ([]any, error) {
			return payload.Payloads{"ok", map[string]any{"c": make(chan int)}}, nil
		},
	}))
	for name, want := range map[string]string{
		"complex":  "result: complex128 cannot be sent",
		"nested":   "result2.rows[1].C: chan int cannot be sent",
		"inexact":  "result: integer 9007199254740993 cannot be sent: a Lua number would round it (integers are exact to 2^53)",
		"intkey":   "result: integer 9007199254740993 cannot be sent",
		"deepint":  "result.n[1]: integer -9007199254740993 cannot be sent",
		"func key": "result.k: func() cannot be sent",
	} {
		res, err := runLua(t, rt, "bad.lua", `return conv.bad(...)`, "", name)
		require.NoError(t, err, name)
		require.Len(t, res, 2, name)
		assert.Nil(t, res[0], name)
		assert.Contains(t, res[1], want, name)
	}
	res, err := runLua(t, rt, "gomod.lua", `return gomod.bad()`, "")
	require.NoError(t, err)
	assert.Equal(t, payload.Payloads{nil, "gomod.bad: result2.c: chan int cannot be sent"}, res)

	s, err := rt.LoadString("start.lua", `return (process.receive())`)
	require.NoError(t, err)
	_, err = rt.Start(context.Background(), s, "", "ok", make(chan int))
	require.EqualError(t, err, "start start.lua: arg2: chan int cannot be sent")
	var ve *payload.ValueError
	require.ErrorAs(t, err, &ve)
	assert.Equal(t, "arg2", ve.Path)

	h, err := rt.Start(context.Background(), s, "")
	require.NoError(t, err)
	err = rt.Send(h.PID(), map[string]any{"f": func() {}})
	require.ErrorContains(t, err, "value.f: func() cannot be sent")
	cyc := &cycle{}
	cyc.Next = cyc
	require.ErrorContains(t, rt.Send(h.PID(), cyc), "value.Next: cycle")
	require.ErrorContains(t, rt.Send(h.PID(), uint64(math.MaxUint64)), "value: integer 18446744073709551615 cannot be sent: it is beyond int64")
	require.ErrorContains(t, rt.Send(h.PID(), (*ruleRow)(nil)), "message must not be nil")
	require.NoError(t, rt.Send(h.PID(), "done"))
	assert.Equal(t, payload.Payloads{"done"}, waitFor(t, h))

	in, err := rt.NewInbox()
	require.NoError(t, err)
	require.ErrorContains(t, in.Send(h.PID(), complex64(1)), "value: complex64 cannot be sent")
	_, err = in.Call(context.Background(), h.PID(), []any{make(chan int)})
	require.ErrorContains(t, err, "call")
	require.ErrorContains(t, err, "value[1]: chan int cannot be sent")
}

type cycle struct{ Next *cycle }

// TestValueRuleFromLua: what Go receives from Lua, the same as a
// process's result, a message to an inbox, and a command's arguments.
func TestValueRuleFromLua(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{})
	var mu sync.Mutex
	var args payload.Payloads
	require.NoError(t, rt.Register("conv.take", func(c Call) error {
		mu.Lock()
		args = c.Args
		mu.Unlock()
		c.Complete(nil)
		return nil
	}))
	in, err := rt.NewInbox()
	require.NoError(t, err)
	want := payload.Payloads{
		true, "s", int64(3), 2.5, int64(-1 << 40), 1e300, // nil at 1 is dropped at the end only
		[]any{int64(1), "two"},                 // keys 1..n
		map[string]any{"a": int64(1)},          // string keys
		map[any]any{int64(1): "x", "k": false}, // other keys
		map[any]any{int64(2): "sparse"},        // not 1..n
		[]any{},                                // empty
		map[string]any{},                       // json.object()
		payload.Null,                           // json.null
		int64(in.PID()),                        // a PID is a number
		"2026-01-02T03:04:05Z",                 // a time comes back as the string it went as
	}
	src := `
		local function values(inbox, when)
			return true, "s", 3, 2.5, -2^40, 1e300,
				{1, "two"}, {a = 1}, {[1] = "x", k = false}, {[2] = "sparse"},
				{}, json.object(), json.null, inbox, when
		end
		function main(inbox, when)
			conv.take(values(inbox, when))
			process.send(inbox, {values(inbox, when)})
			return values(inbox, when)
		end`
	res, err := runLua(t, rt, "fromlua.lua", src, "main", in.PID(), time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	require.NoError(t, err)
	assert.Equal(t, want, res, "a process's result")
	mu.Lock()
	assert.Equal(t, want, args, "a command's arguments")
	mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	m, err := in.Receive(ctx)
	require.NoError(t, err)
	assert.Equal(t, []any(want), m.Value, "a message")
}
