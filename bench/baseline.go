package main

import (
	"time"

	lua "github.com/luarun/luarun/lua"
)

// gproc is a baseline-A process: a goroutine with its own LState and a
// channel as its mailbox; Lua gets recv() and send(i, v) (to gproc i).
type gproc struct {
	L     *lua.LState
	inbox chan lua.LValue
}

// newGprocs makes n baseline processes running src (which defines the
// function the caller will call), with mailboxes of capacity buf.
func newGprocs(n, buf int, src string) []*gproc {
	ps := make([]*gproc, n)
	for i := range ps {
		ps[i] = &gproc{L: lua.NewState(), inbox: make(chan lua.LValue, buf)}
	}
	for _, p := range ps {
		p.L.SetGlobal("recv", p.L.NewFunction(func(L *lua.LState) int {
			L.Push(<-p.inbox)
			return 1
		}))
		p.L.SetGlobal("send", p.L.NewFunction(func(L *lua.LState) int {
			ps[L.CheckInt(1)-1].inbox <- L.Get(2)
			return 0
		}))
		check(p.L.DoString(src))
	}
	return ps
}

// goCall runs fn(args) of p on a new goroutine; done hears when it returns.
func (p *gproc) goCall(fn string, done chan<- error, args ...lua.LValue) {
	go func() {
		done <- p.L.CallByParam(lua.P{Fn: p.L.GetGlobal(fn), NRet: 0, Protect: true}, args...)
	}()
}

func closeAll(ps []*gproc) {
	for _, p := range ps {
		p.L.Close()
	}
}

// floorRoundTrip is the floor: one bare gopher-lua coroutine resume/yield
// round trip (a Lua loop calling a Go function that yields), per trip.
func floorRoundTrip(n int) time.Duration {
	L := lua.NewState()
	defer L.Close()
	L.SetGlobal("y", L.NewFunction(func(L *lua.LState) int { return L.Yield() }))
	check(L.DoString(`function loop(n) for i = 1, n do y() end end`))
	co, _ := L.NewThread()
	fn := L.GetGlobal("loop").(*lua.LFunction)
	t0 := time.Now()
	st, err, _ := L.Resume(co, fn, lua.LNumber(n))
	for st == lua.ResumeYield && err == nil {
		st, err, _ = L.Resume(co, nil)
	}
	check(err)
	return time.Since(t0) / time.Duration(n)
}
