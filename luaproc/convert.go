package luaproc

// Lua values ↔ payload values.
//
// A Lua value crosses a process boundary (a message, spawn arguments, a
// process's results, a command's arguments and results) as a payload
// value, so the receiver gets a deep copy it owns:
//
//	nil, boolean, string      ↔ nil, bool, string ([]byte arrives as a string)
//	number                    → int64 when integral and in range, else float64
//	table with keys 1..n only → []any (n ≥ 1)
//	empty table               → []any{} (or map[string]any{} if marked as a JSON object,
//	                            which arrives marked)
//	json.null                 ↔ payload.Null
//	table with string keys    → map[string]any
//	any other table           → map[any]any (keys bool, int64, float64, string)
//
// Functions, userdata, coroutines and tables met again while being copied
// (cycles; a table shared twice is copied twice) are refused with the
// value's path, e.g. "msg.items[3].cb: function cannot be sent".

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	lua "github.com/luarun/luarun/lua"

	"github.com/luarun/luarun/payload"
	"github.com/luarun/luarun/serve"
)

// converter holds the options of one conversion.
type converter struct {
	// null, when set, stands for nil inside lists and maps (json.null).
	null lua.LValue
	// objectMT marks empty tables that are objects, not lists (JSON).
	objectMT lua.LValue
	// visiting holds the tables on the current path, to refuse cycles.
	visiting tableStack
	// moves: a movable userdata (a socket's handle, serving.go) moves
	// into the value; without it, userdata cannot be sent.
	moves bool
	// ticker, when set (json), counts each value converted, and each
	// comparison of a table's keys, as a step of its interrupt budget
	// (lua.LState.Tick).
	ticker *lua.LState
	// strict (a Go application's value: a command's or Go function's
	// result) refuses integers a Lua number would round; err is the first
	// refusal, errSteps the path to it from the value converted,
	// innermost first (fromApp).
	strict   bool
	err      *payload.ValueError
	errSteps []string
}

// toPayload converts v, naming it path in errors.
func toPayload(v lua.LValue, path string) (any, error) {
	c := converter{objectMT: jsonObjectMT}
	return c.toGo(v, path, 0)
}

// toMoved is toPayload for a message: sockets' handles move into it.
func toMoved(v lua.LValue, path string) (any, error) {
	c := converter{objectMT: jsonObjectMT, moves: true}
	return c.toGo(v, path, 0)
}

// toPayloads converts a list of values (a process's results: sockets'
// handles move into them), naming them by the names path(i).
func toPayloads(vs []lua.LValue, path func(i int) string) ([]any, error) {
	out := make([]any, len(vs))
	c := converter{objectMT: jsonObjectMT, moves: true}
	for i, v := range vs {
		vpath := ""
		if !scalar(v) { // the name is for errors, which a scalar cannot have
			vpath = path(i)
		}
		x, err := c.toGo(v, vpath, 0)
		if err != nil {
			return nil, err
		}
		out[i] = x
	}
	return out, nil
}

const maxNesting = 200

// tableSteps is how many steps of the interrupt budget (lua.LState.Tick)
// a converted table counts beside its values: making or walking one
// costs some 100 ns, a step a few.
const tableSteps = 16

func (c *converter) toGo(v lua.LValue, path string, depth int) (any, error) {
	if c.ticker != nil {
		c.ticker.Tick()
	}
	switch x := v.(type) {
	case *lua.LNilType:
		return nil, nil
	case lua.LBool:
		return bool(x), nil
	case lua.LNumber:
		return numberToGo(float64(x)), nil
	case lua.LString:
		s, _ := lua.GoStringOf(v) // string(x) in v's box: no second one
		return s, nil
	case *lua.LTable:
		return c.table(x, path, depth)
	case *lua.LUserData:
		if v == jsonNull {
			if c.null != nil { // JSON: null is nil
				return nil, nil
			}
			return payload.Null, nil // a message: it arrives as json.null
		}
		if m, ok := x.Value.(movable); ok && c.moves {
			v, err := m.Move()
			if err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
			return v, nil
		}
		return nil, fmt.Errorf("%s: userdata cannot be sent", path)
	case *lua.LFunction:
		return nil, fmt.Errorf("%s: function cannot be sent", path)
	case *lua.LState:
		return nil, fmt.Errorf("%s: coroutine cannot be sent", path)
	case nil:
		return nil, nil
	default:
		return nil, fmt.Errorf("%s: %s cannot be sent", path, v.Type())
	}
}

// numberToGo keeps integral numbers integers, as JSON and Lua 5.3 would.
func numberToGo(f float64) any {
	if f == math.Trunc(f) && f >= -(1<<63) && f < 1<<63 && !(f == 0 && math.Signbit(f)) {
		return int64(f)
	}
	return f
}

func (c *converter) table(t *lua.LTable, path string, depth int) (any, error) {
	if depth > maxNesting {
		return nil, fmt.Errorf("%s: nested deeper than %d tables", path, maxNesting)
	}
	if c.ticker != nil {
		c.ticker.TickN(tableSteps)
	}
	if c.visiting.contains(t) {
		return nil, fmt.Errorf("%s: cyclic table cannot be sent", path)
	}
	c.visiting.push(t)
	defer c.visiting.pop()

	count, n := 0, 0 // n: the largest integer key

	allStrings, sequence := true, true
	var err error
	t.ForEach(func(k, _ lua.LValue) {
		if c.ticker != nil { // a big table's keys take milliseconds to walk
			c.ticker.Tick()
		}
		count++
		switch kk := k.(type) {
		case lua.LString:
			sequence = false
		case lua.LNumber:
			allStrings = false
			if f := float64(kk); f != math.Trunc(f) || f < 1 || f > math.MaxInt32 {
				sequence = false
			} else if int(f) > n {
				n = int(f)
			}
		case lua.LBool:
			allStrings, sequence = false, false
		default:
			allStrings, sequence = false, false
			if err == nil {
				err = fmt.Errorf("%s: a %s key cannot be sent", path, k.Type())
			}
		}
	})
	if err != nil {
		return nil, err
	}
	switch {
	case count == 0:
		if c.objectMT != nil && c.objectMT != lua.LNil && t.Metatable == c.objectMT {
			return map[string]any{}, nil
		}
		return []any{}, nil
	case sequence && count == n:
		list := make([]any, n)
		for i := 1; i <= n; i++ {
			v, vpath := t.RawGetInt(i), ""
			if !scalar(v) {
				vpath = payload.JoinKey(path, int64(i))
			}
			if list[i-1], err = c.toGo(v, vpath, depth+1); err != nil {
				return nil, err
			}
		}
		return list, nil
	case allStrings:
		m := make(map[string]any, count)
		var buf [8]lua.LValue
		for _, k := range c.sortedKeys(t, buf[:0]) {
			s := string(k.(lua.LString))
			v, vpath := t.RawGet(k), ""
			if !scalar(v) {
				vpath = payload.JoinKey(path, s)
			}
			if m[s], err = c.toGo(v, vpath, depth+1); err != nil {
				return nil, err
			}
		}
		return m, nil
	default:
		m := make(map[any]any, count)
		var buf [8]lua.LValue
		for _, k := range c.sortedKeys(t, buf[:0]) {
			gk, _ := c.toGo(k, path, depth+1)
			if m[gk], err = c.toGo(t.RawGet(k), payload.JoinKey(path, gk), depth+1); err != nil {
				return nil, err
			}
		}
		return m, nil
	}
}

// tableStack is a stack of tables (a path's, short): the first few in
// place, so that a message's usual nesting costs no allocation (a map or
// a slice of the converter's own array would).
type tableStack struct {
	first [4]*lua.LTable
	n     int
	more  []*lua.LTable // past first
}

func (s *tableStack) contains(t *lua.LTable) bool {
	for i := range min(s.n, len(s.first)) {
		if s.first[i] == t {
			return true
		}
	}
	return slices.Contains(s.more, t)
}

func (s *tableStack) push(t *lua.LTable) {
	if s.n < len(s.first) {
		s.first[s.n] = t
	} else {
		s.more = append(s.more, t)
	}
	s.n++
}

func (s *tableStack) pop() {
	s.n--
	if s.n < len(s.first) {
		s.first[s.n] = nil
	} else {
		s.more = s.more[:len(s.more)-1]
	}
}

// sortedKeys appends t's keys to keys in a stable order, so the first
// error reported for a table is always the same one. With a ticker, each
// comparison of a big table's keys is a step (a million keys take a few
// hundred milliseconds to sort: a kill must not wait for them).
func (c *converter) sortedKeys(t *lua.LTable, keys []lua.LValue) []lua.LValue {
	for k, _ := t.Next(lua.LNil); k != lua.LNil; k, _ = t.Next(k) {
		if c.ticker != nil {
			c.ticker.Tick()
		}
		keys = append(keys, k)
	}
	if L := c.ticker; L != nil && len(keys) > 64 { // a small table: its values tick
		slices.SortFunc(keys, func(a, b lua.LValue) int {
			L.Tick()
			return compareKeys(a, b)
		})
		return keys
	}
	slices.SortFunc(keys, compareKeys)
	return keys
}

// compareKeys orders keys by type, then numbers and strings by value,
// false before true.
func compareKeys(a, b lua.LValue) int {
	if a.Type() != b.Type() {
		return cmp.Compare(a.Type(), b.Type())
	}
	switch a := a.(type) {
	case lua.LNumber:
		return cmp.Compare(a, b.(lua.LNumber))
	case lua.LString:
		return cmp.Compare(a, b.(lua.LString))
	case lua.LBool:
		switch {
		case a == b.(lua.LBool):
			return 0
		case !bool(a):
			return -1
		}
		return 1
	}
	return 0
}

// scalar reports whether v is a string, number, boolean or nil: a value
// that converts without an error, so without the path (for errors) that
// would cost an allocation per value.
func scalar(v lua.LValue) bool {
	switch v.(type) {
	case lua.LString, lua.LNumber, lua.LBool, *lua.LNilType:
		return true
	}
	return false
}

// toLua converts a payload value into L's world. Other Go values (a
// command's result) are converted by payload.FromGo's table first; one
// with no Lua form sets c.err and converts as nil.
func (c *converter) toLua(L *lua.LState, v any) lua.LValue {
	if c.ticker != nil {
		c.ticker.Tick()
	}
	if v == payload.Null {
		return jsonNull
	}
	switch x := v.(type) {
	case nil:
		if c.null != nil {
			return c.null
		}
		return lua.LNil
	case bool:
		return lua.LBool(x)
	case int64:
		if c.strict && (x > 1<<53 || x < -1<<53) {
			return c.converted(L, x)
		}
		return integerValue(x)
	case int:
		if c.strict && (x > 1<<53 || x < -1<<53) {
			return c.converted(L, x)
		}
		return integerValue(int64(x))
	case float64:
		return lua.LNumber(x)
	case string:
		chargeString(L, len(x))
		lv, _ := lua.StringValueOf(v) // shares v's header: lua.LString(x) would box it again
		return lv
	case []byte:
		chargeString(L, len(x))
		return lua.LString(x)
	case []any:
		if c.ticker != nil {
			c.ticker.TickN(tableSteps)
		}
		t := L.CreateTable(len(x), 0)
		for i, e := range x {
			lv := c.toLua(L, e)
			if c.err != nil {
				return c.refusedAt("[" + strconv.Itoa(i+1) + "]")
			}
			t.RawSetInt(i+1, lv)
		}
		return t
	case map[string]any:
		if c.ticker != nil {
			c.ticker.TickN(tableSteps)
		}
		t := L.CreateTable(0, len(x))
		for k, e := range x {
			lv := c.toLua(L, e)
			if c.err != nil {
				return c.refusedAt(payload.JoinKey("", k))
			}
			t.RawSetString(k, lv) // a nil is left out
		}
		if len(x) == 0 && c.objectMT != nil {
			t.Metatable = c.objectMT
		}
		return t
	case map[any]any:
		if c.strict { // its keys too are a Go application's
			return c.converted(L, x)
		}
		t := L.CreateTable(0, len(x))
		for k, e := range x {
			lk := c.toLua(L, k)
			if lk == lua.LNil || lk == c.null {
				continue
			}
			lv := c.toLua(L, e)
			if c.err != nil {
				return c.refusedAt(payload.JoinKey("", k))
			}
			t.RawSet(lk, lv)
		}
		return t
	case lua.LString: // a scalar message (messageValue)
		chargeString(L, len(x))
		return v.(lua.LValue) // not x: boxing it again would allocate
	case lua.LNumber, lua.LBool: // a scalar message (messageValue)
		return x.(lua.LValue)
	case error:
		return lua.LString(x.Error())
	case *serve.Request: // a request process's argument (serving.go)
		return requestTable(L, x)
	default:
		if lv, ok := arrival(L, x); ok { // a socket moved here (serving.go)
			return lv
		}
		return c.converted(L, x)
	}
}

// converted is toLua of a value that is not a payload value, or that
// strict must check (an integer past 2^53, a map[any]any's keys):
// payload.FromGo's, or nil and c.err.
func (c *converter) converted(L *lua.LState, v any) lua.LValue {
	pv, err := payload.FromGo(v)
	if err != nil {
		// As's target is a local, not &c.err: that would send every
		// converter to the heap (toLuaValue's among them)
		var ve *payload.ValueError
		if !errors.As(err, &ve) {
			ve = &payload.ValueError{Path: "value", Reason: err.Error()}
		}
		c.err = ve
		return lua.LNil
	}
	strict := c.strict
	c.strict = false // FromGo has checked it all
	lv := c.toLua(L, pv)
	c.strict = strict
	return lv
}

// refusedAt adds a container's step to the path of c.err.
func (c *converter) refusedAt(step string) lua.LValue {
	c.errSteps = append(c.errSteps, step)
	return lua.LNil
}

// appValues is fromApp of each value of a list, naming them result1,
// result2...
func appValues(L *lua.LState, vs []any) ([]lua.LValue, error) {
	out := make([]lua.LValue, len(vs))
	for i, v := range vs {
		lv, err := fromApp(L, v, "result"+strconv.Itoa(i+1))
		if err != nil {
			return nil, err
		}
		out[i] = lv
	}
	return out, nil
}

// fromApp converts a value a Go application gave (a command's or a Go
// function's result) by payload.FromGo's table; a refusal is an error
// whose path starts at root.
func fromApp(L *lua.LState, v any, root string) (lua.LValue, error) {
	c := converter{objectMT: jsonObjectMT, strict: true}
	lv := c.toLua(L, v)
	if c.err == nil {
		return lv, nil
	}
	var b strings.Builder
	b.WriteString(root)
	for i := len(c.errSteps) - 1; i >= 0; i-- {
		b.WriteString(c.errSteps[i])
	}
	b.WriteString(strings.TrimPrefix(c.err.Path, "value"))
	return nil, &payload.ValueError{Path: b.String(), Reason: c.err.Reason}
}

// toLuaValue converts with the default options. A scalar message (a Lua
// number, string or boolean: messageValue) is returned as it is without
// a converter, which escapes to the heap: it was an allocation of 120
// bytes for every message received.
func toLuaValue(L *lua.LState, v any) lua.LValue {
	switch x := v.(type) {
	case lua.LNumber, lua.LBool:
		return x.(lua.LValue)
	case lua.LString:
		chargeString(L, len(x))
		return v.(lua.LValue) // not x: boxing it again would allocate
	}
	c := converter{objectMT: jsonObjectMT}
	return c.toLua(L, v)
}

// chargeString charges L for a large string it takes in (a message, a
// result, a file's contents: lua/memory.go); a short one is not worth
// the call.
func chargeString(L *lua.LState, n int) {
	if n >= 64 {
		L.Charge(n)
	}
}
