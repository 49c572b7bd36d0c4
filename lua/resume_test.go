// Tests of LState.ResumeSuspended, the process layer's resume of a
// coroutine suspended in a yield: it leaves on the resumer's stack what
// coroutine.resume would, and refuses what coroutine.resume refuses.
package lua

import "testing"

// resumeSuspended resumes th with args and returns the values
// ResumeSuspended left on L's stack, which it then clears.
func resumeSuspended(t *testing.T, L, th *LState, args ...LValue) []LValue {
	t.Helper()
	base := L.GetTop()
	n := L.ResumeSuspended(th, args)
	if got := L.GetTop() - base; got != n {
		t.Fatalf("answered %d values, left %d", n, got)
	}
	vs := make([]LValue, n)
	for i := range vs {
		vs[i] = L.Get(base + 1 + i)
	}
	L.SetTop(base)
	return vs
}

func wantValues(t *testing.T, got []LValue, want ...LValue) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
}

func TestResumeSuspendedAsCoroutineResume(t *testing.T) {
	L := NewState()
	defer L.Close()
	runOK(t, L, `
		function body(a)
			local b, c = coroutine.yield(a + 1, "first")
			local d = coroutine.yield(b .. c)
			if d == "fail" then error("failed", 0) end
			return d, "end"
		end`)
	th, _ := L.NewThread()
	st, err, vals := L.Resume(th, L.GetGlobal("body").(*LFunction), LNumber(1))
	if st != ResumeYield || err != nil || len(vals) != 2 || vals[0] != LNumber(2) {
		t.Fatalf("first resume: %v %v %v", st, err, vals)
	}
	wantValues(t, resumeSuspended(t, L, th, LString("x"), LString("y")), LTrue, LString("xy"))
	wantValues(t, resumeSuspended(t, L, th, LString("done")), LTrue, LString("done"), LString("end"))
	if !th.Dead {
		t.Fatal("the coroutine returned but is not dead")
	}
	wantValues(t, resumeSuspended(t, L, th), LFalse, LString("can not resume a dead thread"))
	if L.G.CurrentThread != L {
		t.Fatalf("current thread %v after the resumes, want the main state", L.G.CurrentThread)
	}

	failing, _ := L.NewThread()
	L.Resume(failing, L.GetGlobal("body").(*LFunction), LNumber(1))
	resumeSuspended(t, L, failing, LString("a"), LString("b"))
	wantValues(t, resumeSuspended(t, L, failing, LString("fail")), LFalse, LString("failed"))
}

func TestResumeSuspendedRefusesUnstartedAndRunning(t *testing.T) {
	L := NewState()
	defer L.Close()
	fresh, _ := L.NewThread()
	wantValues(t, resumeSuspended(t, L, fresh), LFalse, LString("can not resume a coroutine that has not started"))
	L.G.MainThread, L.G.CurrentThread = L, L
	wantValues(t, resumeSuspended(t, L, L), LFalse, LString("can not resume a running thread"))
}

// ResumeSuspendedFor takes a yield of the marker off the resumer's
// stack (clearing the slots it used), and leaves anything else there as
// ResumeSuspended does.
func TestResumeSuspendedForTakesTheMarker(t *testing.T) {
	L := NewState()
	defer L.Close()
	marker := &LUserData{}
	L.SetGlobal("marker", marker)
	runOK(t, L, `
		function body()
			local a = coroutine.yield(marker)
			local b = coroutine.yield(marker, a)
			coroutine.yield(a .. b)
			coroutine.yield(false, marker)
			return "end"
		end`)
	th, _ := L.NewThread()
	if st, err, _ := L.Resume(th, L.GetGlobal("body").(*LFunction)); st != ResumeYield || err != nil {
		t.Fatalf("first resume: %v %v", st, err)
	}
	resumeFor := func(args ...LValue) (int, bool, []LValue) {
		t.Helper()
		n, marked := L.ResumeSuspendedFor(th, args, marker)
		if L.GetTop() != n {
			t.Fatalf("answered %d values, left %d", n, L.GetTop())
		}
		vs := make([]LValue, n)
		for i := range vs {
			vs[i] = L.Get(1 + i)
		}
		if marked && len(L.reg.array) > 2 && (L.reg.array[0] != nil || L.reg.array[1] != nil) {
			t.Fatalf("slots above the top still hold %v %v", L.reg.array[0], L.reg.array[1])
		}
		L.SetTop(0)
		return n, marked, vs
	}
	if n, marked, _ := resumeFor(LString("x")); !marked || n != 0 {
		t.Fatalf("a yield of the marker with a value: n %d, marked %v", n, marked)
	}
	if _, marked, vs := resumeFor(LString("y")); marked {
		t.Fatal("a yield of something else was taken for the marker")
	} else {
		wantValues(t, vs, LTrue, LString("xy"))
	}
	if _, marked, vs := resumeFor(); marked {
		t.Fatal("a yield of false, marker was taken for the marker")
	} else {
		wantValues(t, vs, LTrue, LFalse, marker)
	}
	if _, marked, vs := resumeFor(); marked || !th.Dead {
		t.Fatal("the coroutine's return was taken for the marker, or it is not dead")
	} else {
		wantValues(t, vs, LTrue, LString("end"))
	}
}

// A Go function's YieldMarked yields nothing; ResumeSuspendedFor reports
// it as the marker's yield and leaves nothing on the resumer's stack,
// and LState.Resume's resumer finds it with TakeMarkedYield. A plain
// yield of nothing afterwards is not taken for it.
func TestYieldMarked(t *testing.T) {
	L := NewState()
	defer L.Close()
	marker := &LUserData{}
	L.SetGlobal("block", L.NewFunction(func(L *LState) int { return L.YieldMarked() }))
	runOK(t, L, `
		function body()
			local a, b = block("ignored")
			local c = coroutine.yield()
			return a .. b .. c
		end`)
	th, _ := L.NewThread()
	st, err, _ := L.Resume(th, L.GetGlobal("body").(*LFunction))
	if st != ResumeYield || err != nil || !th.TakeMarkedYield() {
		t.Fatalf("first resume: %v %v, or the marked yield was not reported", st, err)
	}
	if th.TakeMarkedYield() {
		t.Fatal("TakeMarkedYield did not forget the yield")
	}
	if n, marked := L.ResumeSuspendedFor(th, []LValue{LString("x"), LString("y")}, marker); marked || n != 1 {
		t.Fatalf("a plain yield of nothing: n %d, marked %v", n, marked)
	}
	wantValues(t, []LValue{L.Get(1)}, LTrue)
	L.SetTop(0)
	th3, _ := L.NewThread()
	L.Resume(th3, L.GetGlobal("body").(*LFunction)) // suspended in block
	th3.TakeMarkedYield()
	if n, marked := L.ResumeSuspendedFor(th3, []LValue{LString("p"), LString("q")}, marker); marked || n != 1 {
		t.Fatalf("resumed out of block into a plain yield: n %d, marked %v", n, marked)
	}
	L.SetTop(0)
	if n, marked := L.ResumeSuspendedFor(th3, []LValue{LString("r")}, marker); marked || n != 2 || L.Get(2) != LString("pqr") {
		t.Fatalf("the return: n %d, marked %v, %v", n, marked, L.Get(2))
	}
	L.SetTop(0)
	// a marked yield met by ResumeSuspendedFor
	co, _ := L.NewThread()
	runOK(t, L, `function twice() block() block() return "done" end`)
	L.Resume(co, L.GetGlobal("twice").(*LFunction))
	co.TakeMarkedYield()
	if n, marked := L.ResumeSuspendedFor(co, nil, marker); !marked || n != 0 || L.GetTop() != 0 {
		t.Fatalf("a marked yield: n %d, marked %v, top %d", n, marked, L.GetTop())
	}
	if n, marked := L.ResumeSuspendedFor(co, nil, marker); marked || n != 2 || L.Get(2) != LString("done") {
		t.Fatalf("the return after it: n %d, marked %v", n, marked)
	}
}

// ResumeAppend puts a coroutine's first results in the caller's buffer,
// even the one its arguments came in (they are pushed first), and
// grows it only for more values than it holds.
func TestResumeAppendIntoArgs(t *testing.T) {
	L := NewState()
	defer L.Close()
	runOK(t, L, `function swap(a, b) return b, a, "x" end`)
	fn := L.GetGlobal("swap").(*LFunction)
	var buf [4]LValue
	args := append(buf[:0], LString("a"), LString("b"))
	co, _ := L.NewThread()
	st, err, vals := L.ResumeAppend(buf[:0], co, fn, args...)
	if err != nil || st != ResumeOK {
		t.Fatalf("state %v, err %v", st, err)
	}
	wantValues(t, vals, LString("b"), LString("a"), LString("x"))
	if &vals[0] != &buf[0] {
		t.Error("the results are not in the buffer given")
	}
	co2, _ := L.NewThread()
	_, _, vals = L.ResumeAppend(buf[:0:1], co2, fn, LNumber(1), LNumber(2))
	wantValues(t, vals, LNumber(2), LNumber(1), LString("x"))
}
