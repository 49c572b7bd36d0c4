package lua

func OpenCoroutine(L *LState) int {
	// TODO: Tie module name to contents of linit.go?
	mod := L.RegisterModule(CoroutineLibName, coFuncs)
	L.Push(mod)
	return 1
}

var coFuncs = map[string]LGFunction{
	"create":  coCreate,
	"yield":   coYield,
	"resume":  coResume,
	"running": coRunning,
	"status":  coStatus,
	"wrap":    coWrap,
}

func coCreate(L *LState) int {
	fn := L.CheckFunction(1)
	newthread, _ := L.NewThread()
	base := 0
	newthread.stack.Push(callFrame{
		Fn:         fn,
		Pc:         0,
		Base:       base,
		LocalBase:  base + 1,
		ReturnBase: base,
		NArgs:      0,
		NRet:       MultRet,
		Parent:     nil,
		TailCall:   0,
	})
	L.Push(newthread)
	return 1
}

// yieldAcrossBoundary is Lua 5.1's error for a yield that would return
// into Go code: from a metamethod, a Go function's callback (a sort
// comparator, a gsub replacement, a load reader), a pairs iterator or a
// debug hook.
const yieldAcrossBoundary = "attempt to yield across metamethod/C-call boundary"

// CanYield reports whether a Go function running in L may yield now
// (luarun): L runs no nested VM loop for a call from Go and no debug
// hook. A yield where it cannot raises yieldAcrossBoundary.
func (L *LState) CanYield() bool { return L.nCcalls == 0 && !L.InHook() }

func coYield(L *LState) int {
	if !L.CanYield() { // luarun: checked before the yield, as 5.1's lua_yield
		L.raiseError(0, "%s", yieldAcrossBoundary) // no position, as 5.1's
	}
	return -1
}

func coResume(L *LState) int {
	th := L.CheckThread(1)
	if L.G.CurrentThread == th {
		msg := "can not resume a running thread"
		if th.wrapped {
			L.RaiseError("%s", msg)
			return 0
		}
		L.Push(LFalse)
		L.Push(LString(msg))
		return 2
	}
	if th.Dead {
		msg := "can not resume a dead thread"
		if th.wrapped {
			L.RaiseError("%s", msg)
			return 0
		}
		L.Push(LFalse)
		L.Push(LString(msg))
		return 2
	}
	th.Parent = L
	L.G.CurrentThread = th
	if !th.isStarted() {
		cf := th.stack.Last()
		th.currentFrame = cf
		th.SetTop(0)
		nargs := L.GetTop() - 1
		L.XMoveTo(th, nargs)
		cf.NArgs = int32(nargs)
		th.initCallFrame(cf)
		th.Panic = panicWithoutTraceback
	} else if nargs := L.GetTop() - 1; !L.resumePreempted(th, nargs) {
		L.XMoveTo(th, nargs)
	}
	top := L.GetTop()
	threadRun(th)
	return L.GetTop() - top
}

// ResumeSuspended is coroutine.resume(th, args...) for a Go caller
// (luarun: the process layer's resume of a task) without its stack
// traffic: args go straight onto th's stack, not through ls's, and th
// is not looked up among ls's values. th must be started: suspended in a
// yield. As coroutine.resume, it leaves on ls's stack, above the top it
// had, true and the values th yielded or returned, or false and the
// error, and answers how many it left there.
func (ls *LState) ResumeSuspended(th *LState, args []LValue) int {
	switch {
	case ls.G.CurrentThread == th:
		return ls.pushResumeRefusal("can not resume a running thread")
	case th.Dead:
		return ls.pushResumeRefusal("can not resume a dead thread")
	case !th.isStarted():
		return ls.pushResumeRefusal("can not resume a coroutine that has not started")
	}
	th.Parent = ls
	ls.G.CurrentThread = th
	if th.preempted { // luarun: it takes no values (preempt.go)
		th.preempted = false
		args = nil
	}
	for _, a := range args {
		th.Push(a)
	}
	top := ls.GetTop()
	threadRun(th)
	return ls.GetTop() - top
}

// ResumeSuspendedFor is ResumeSuspended for a caller that mostly
// expects th to yield marker (luarun: a task's blocking call yields the
// process layer's command marker): when th yielded marker first, it
// leaves nothing on ls's stack and reports true (n 0); otherwise it
// leaves what ResumeSuspended does and answers how many as n. The
// marker's yield then costs no stack traffic on ls: its slots are
// cleared in place.
func (ls *LState) ResumeSuspendedFor(th *LState, args []LValue, marker *LUserData) (n int, yielded bool) {
	th.markedYield = false
	n = ls.ResumeSuspended(th, args)
	rg := ls.reg
	if th.markedYield { // YieldMarked's: true alone on ls's stack
		th.markedYield = false
		if n == 1 && !th.Dead {
			rg.top--
			rg.array[rg.top] = nil
			return 0, true
		}
	}
	if th.Dead || n < 2 {
		return n, false
	}
	first := rg.top - n
	// type assertions, not interface comparisons: those call ifaceeq
	if b, ok := rg.array[first].(LBool); !ok || !bool(b) {
		return n, false
	}
	if u, ok := rg.array[first+1].(*LUserData); !ok || u != marker {
		return n, false
	}
	for i := first; i < rg.top; i++ { // not clear: its bulk write barrier costs more
		rg.array[i] = nil // values above top must not keep anything alive
	}
	rg.top = first
	return 0, true
}

// YieldMarked is a Go function's yield of the marker to a resumer that
// called ResumeSuspendedFor (luarun: a task's blocking call made in the
// task's own coroutine): it yields no values, and ResumeSuspendedFor
// reports the marker's yield from a flag, so the marker is neither
// pushed nor moved. Only for a coroutine that can yield (CanYield) and
// that ResumeSuspendedFor resumes directly: a Lua resumer would see a
// yield of nothing.
func (ls *LState) YieldMarked() int {
	if ls.GetTop() != 0 {
		ls.SetTop(0)
	}
	ls.markedYield = true
	return -1
}

// TakeMarkedYield reports whether ls's last yield was YieldMarked's,
// and forgets it: for a resume of ls by other means than
// ResumeSuspendedFor (LState.Resume of its first run).
func (ls *LState) TakeMarkedYield() bool {
	m := ls.markedYield
	ls.markedYield = false
	return m
}

// pushResumeRefusal pushes what coroutine.resume answers for a
// coroutine it cannot resume.
func (ls *LState) pushResumeRefusal(msg string) int {
	ls.Push(LFalse)
	ls.Push(LString(msg))
	return 2
}

func coRunning(L *LState) int {
	if L.G.MainThread == L {
		L.Push(LNil)
		return 1
	}
	L.Push(L.G.CurrentThread)
	return 1
}

func coStatus(L *LState) int {
	L.Push(LString(L.Status(L.CheckThread(1))))
	return 1
}

func wrapaux(L *LState) int {
	L.Insert(L.ToThread(UpvalueIndex(1)), 1)
	return coResume(L)
}

func coWrap(L *LState) int {
	coCreate(L)
	L.CheckThread(L.GetTop()).wrapped = true
	v := L.Get(L.GetTop())
	L.Pop(1)
	L.Push(L.NewClosure(wrapaux, v))
	return 1
}

//
