package luaproc

// Forwarded coroutines: a script's coroutine that yields the command
// marker (its blocking call, or a preemption: preempt.go) is suspended
// only as far as gopher-lua knows. The coroutine that resumed it
// forwards the marker out to the task (prelude.lua's pass) and resumes
// it with the call's results when they come: until then it is, as in
// Lua, a coroutine that another one resumed and that has not yielded to
// it — "normal". Another task of the process (a process.all function),
// running meanwhile, must neither see it suspended nor resume it: it
// would run the rest of it (a blocking call's results taken by the
// wrong resumer, a preempted coroutine's values dropped), and its
// resumer would find it dead or elsewhere.
//
// Invariant: p.forwarded[co] is the coroutine whose resume of co
// returned the marker with co suspended, until that coroutine resumes
// co again. Only that coroutine's resume takes the entry.

import lua "github.com/luarun/luarun/lua"

// takeForwarded reports whether L may resume th (th is not forwarded by
// another coroutine), and forgets th's entry if L forwards it.
func (p *luaProcess) takeForwarded(L, th *lua.LState) bool {
	if p.procMore == nil || len(p.forwarded) == 0 {
		return true
	}
	by, ok := p.forwarded[th]
	if !ok {
		return true
	}
	if by != L {
		return false
	}
	delete(p.forwarded, th)
	return true
}

// noteForwarded records th as forwarded by L when the resume that left
// n values on L's stack returned the marker with th suspended.
func (p *luaProcess) noteForwarded(L, th *lua.LState, n int) {
	if n < 2 || th.Dead || L.Get(-n) != lua.LTrue || L.Get(-n+1) != cmdMarker {
		return
	}
	more := p.more()
	if more.forwarded == nil {
		more.forwarded = map[*lua.LState]*lua.LState{}
	}
	more.forwarded[th] = L
}

// coStatus is coroutine.status: "normal" for a coroutine forwarded by
// another (see above), else raw's answer.
func coStatus(raw lua.LGFunction) lua.LGFunction {
	return func(L *lua.LState) int {
		th := L.CheckThread(1)
		if p := procOf(L); p.procMore != nil && p.forwarded[th] != nil {
			L.Push(lua.LString("normal"))
			return 1
		}
		return raw(L)
	}
}
