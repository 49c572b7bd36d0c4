package lua

// Tests of the interrupt checks inside long Go functions (interrupt.go):
// each built-in that can run long stops, with the interrupt's error, when
// its state's interrupt flag is set, though no VM instruction runs.

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/luarun/luarun/lua/parse"
)

var errStopped = errors.New("stopped by the test")

// stopper is an interrupt whose Check answers errStopped: any flag bit
// set stops the code, as luaproc's cancel bit does.
func stopper() *Interrupt {
	in := &Interrupt{}
	in.Check = func(*LState) error { return errStopped }
	return in
}

// callWithFlagSet runs setup (which leaves the built-in in global fn and
// its arguments in global args), then sets an interrupt whose flag is
// already up and calls fn from Go: no instruction runs between, so only
// the built-in's own checks can stop it. It returns the call's error.
func callWithFlagSet(t *testing.T, setup string) error {
	t.Helper()
	L := NewState()
	defer L.Close()
	if err := L.DoString(setup); err != nil {
		t.Fatalf("setup: %v", err)
	}
	in := stopper()
	in.Flag.Store(1)
	L.SetInterrupt(in)
	L.ticks = 0 // check at the first step: the setup's load spent some of the budget
	args := L.GetGlobal("args").(*LTable)
	var vals []LValue
	for i := 1; i <= args.Len(); i++ {
		vals = append(vals, args.RawGetInt(i))
	}
	return L.CallByParam(P{Fn: L.GetGlobal("fn"), NRet: 1, Protect: true}, vals...)
}

// TestLongBuiltinsCheckTheInterrupt: every gopher-lua library function
// that can run long raises the interrupt's error when the flag is up.
// Before they checked, each ran to its end (the matcher for minutes).
// loadstring raises it, as the VM would, rather than answering nil and
// a message the script could ignore.
func TestLongBuiltinsCheckTheInterrupt(t *testing.T) {
	const hard = `local s, p = ("a"):rep(30), ("a*"):rep(30) .. "b"` // exponential backtracking
	cases := map[string]string{
		"find":   hard + `; fn, args = string.find, {s, p}`,
		"match":  hard + `; fn, args = string.match, {s, p}`,
		"gsub":   hard + `; fn, args = string.gsub, {s, p, "x"}`,
		"gmatch": hard + `; fn, args = string.gmatch, {s, p}`,
		"sort": `local t = {} for i = 1, 100000 do t[i] = (i * 7919) % 100003 end
		         fn, args = table.sort, {t}`,
		"rep": `fn, args = string.rep, {"abc", 10000000}`,
		"concat": `local t = {} for i = 1, 1000 do t[i] = "x" end
		           fn, args = table.concat, {t, ","}`,
		"loadstring": `fn, args = loadstring, {("x = 1\n"):rep(10000)}`,
	}
	for name, setup := range cases {
		t.Run(name, func(t *testing.T) {
			err := callWithFlagSet(t, setup)
			if err == nil || !strings.Contains(err.Error(), errStopped.Error()) {
				t.Fatalf("want the interrupt's error, got %v", err)
			}
		})
	}
}

// TestRunningBuiltinsStopSoon: a flag set while a built-in runs stops it
// soon (the contract is 10 ms; the bound here only catches a hang on a
// loaded machine). The latency is logged.
func TestRunningBuiltinsStopSoon(t *testing.T) {
	cases := map[string]string{
		"find": `fn, args = string.find, {("a"):rep(30), ("a*"):rep(30) .. "b"}`,
		"sort": `local t = {} for i = 1, 2000000 do t[i] = (i * 7919) % 1000003 end
		         fn, args = table.sort, {t, function(a, b) return a < b end}`,
	}
	for name, setup := range cases {
		t.Run(name, func(t *testing.T) {
			L := NewState()
			defer L.Close()
			if err := L.DoString(setup); err != nil {
				t.Fatal(err)
			}
			in := stopper()
			L.SetInterrupt(in)
			args := L.GetGlobal("args").(*LTable)
			var vals []LValue
			for i := 1; i <= args.Len(); i++ {
				vals = append(vals, args.RawGetInt(i))
			}
			var setAt atomic.Int64
			timer := time.AfterFunc(100*time.Millisecond, func() {
				setAt.Store(time.Now().UnixNano())
				in.Flag.Store(1)
			})
			defer timer.Stop()
			done := make(chan error, 1)
			go func() { done <- L.CallByParam(P{Fn: L.GetGlobal("fn"), Protect: true}, vals...) }()
			select {
			case err := <-done:
				if err == nil {
					t.Skip("finished before the flag was set: nothing to measure")
				}
				if !strings.Contains(err.Error(), errStopped.Error()) {
					t.Fatalf("want the interrupt's error, got %v", err)
				}
				t.Logf("%s stopped %v after the flag was set", name, time.Duration(time.Now().UnixNano()-setAt.Load()))
			case <-time.After(30 * time.Second): // only bounds a hang: it stops in milliseconds
				t.Fatal("the built-in did not stop")
			}
		})
	}
}

// TestParseAndCompileStopOnTheirTick: the parser and the compiler call
// their tick as they go (per token; per statement and expression) and
// stop with its error, wrapped as *parse.Interrupted.
func TestParseAndCompileStopOnTheirTick(t *testing.T) {
	src := "return {" + strings.Repeat("{x = 1, 2}, ", 5000) + "}"
	stopAt := func(n int) (func() error, *int) {
		calls := 0
		return func() error {
			calls++
			if calls == n {
				return errStopped
			}
			return nil
		}, &calls
	}
	tick, calls := stopAt(3000)
	_, err := parse.ParseTick(strings.NewReader(src), "big", tick)
	var ie *parse.Interrupted
	if !errors.As(err, &ie) || !errors.Is(err, errStopped) || *calls != 3000 {
		t.Fatalf("parse: %v after %d ticks", err, *calls)
	}
	chunk, err := parse.Parse(strings.NewReader(src), "big")
	if err != nil {
		t.Fatal(err)
	}
	tick, calls = stopAt(3000)
	_, err = CompileTick(chunk, "big", tick)
	if !errors.As(err, &ie) || !errors.Is(err, errStopped) || *calls != 3000 {
		t.Fatalf("compile: %v after %d ticks", err, *calls)
	}
}

// TestRepInChunks: string.rep built in chunks (repeatTicked) is
// strings.Repeat, for results around and past a chunk, with pieces
// that do not divide it.
func TestRepInChunks(t *testing.T) {
	L := NewState()
	defer L.Close()
	big := strings.Repeat("0123456789", repChunk/10) + "tail!!!"
	for _, c := range []struct {
		s string
		n int
	}{{"abc", 400000}, {"x", 3 << 20}, {"abcdefg", repChunk / 7}, {"abcdefg", repChunk/7 + 1}, {big, 3}, {"", 10}, {"a", 0}} {
		if got := repeatTicked(L, c.s, c.n); got != strings.Repeat(c.s, c.n) {
			t.Errorf("rep(%d bytes, %d): %d bytes, not strings.Repeat's", len(c.s), c.n, len(got))
		}
	}
}
