package luaproc

// Memory bounds: Options.MaxMemory for the runtime, MaxProcessMemory for
// each process.
//
// Go has no per-goroutine heap accounting, so a process's memory is what
// the lua package charges to its state (lua/memory.go: strings the
// library builds, tables and stacks grown, closures, coroutines) plus
// the large strings of the messages and results it takes in. The count
// only adds (Go has no free hook); it is re-based on a walk of what the
// process can reach (lua.Measure) when it passes the process's bound,
// and, paced as a collector is, when it has doubled since the last walk
// (at least memPaceFloor later), so that it stays within about twice
// what the process holds plus memPaceFloor. Each charge past the
// process's grant comes here (MemoryCharge, on the process's goroutine):
//
//   - over the process's bound even after the walk: the allocation is
//     refused ("not enough memory", raised where it was asked for,
//     catchable); a process whose walk alone finds it over its bound, or
//     that takes in more than it may where a refusal cannot be raised
//     (results are converted on its main state, between resumes;
//     a message is taken whole: mustTake), ends with that error (a kill:
//     pcall cannot keep it alive).
//   - a charge of memBigCharge bytes or more is checked against the
//     runtime's bound first (the Go heap last sampled, plus what other
//     large charges reserved since): refused the same way.
//   - a process counting memPublish bytes or more is listed, with its
//     count, for the watchdog.
//
// The watchdog (memWatch) samples the Go heap every memTick (sysmon's
// way: more often as the heap nears the bound), with
// debug.SetMemoryLimit set to the bound so that Go collects harder near
// it. When the heap's objects pass 7/8 of the bound (killLine: Go's
// collector keeps the heap under the limit itself, slower and slower) it
// collects, and if what is live still passes that, it kills the listed
// process that counts the most; the next tick looks again. It chooses no
// other until that one has ended and one more collection has run (its
// memory goes only then: a tick that came first would find the heap
// still over and end the next biggest too), or for memEndWait looks at
// most.

import (
	"fmt"
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"time"

	lua "github.com/luarun/luarun/lua"
)

const (
	memGrant     = 256 << 10 // the most a process allocates between two MemoryCharge calls
	memBigCharge = 64 << 10  // a charge this large is checked against the runtime's bound
	memPublish   = 1 << 20   // a process counting this much is listed for the watchdog
	memPaceFloor = 16 << 20  // the least the count grows by between two walks
	memTick      = 10 * time.Millisecond
	memEndWait   = 50 // ticks the watchdog waits for the process it ended to end
)

// MemoryError is the error of an allocation that would pass a bound, and
// the end of a process over one. Its text begins "not enough memory", Lua
// 5.1's message for a failed allocation.
type MemoryError struct {
	PID   int64 // the process
	Held  int64 // the bytes it counted
	Bound int64 // the bound it passed
	// Runtime: the bound is the runtime's (Options.MaxMemory), not the
	// process's.
	Runtime bool
}

func (e *MemoryError) Error() string {
	which := "its bound"
	if e.Runtime {
		which = "the runtime's bound"
	}
	return fmt.Sprintf("%s (pid %d held ~%s; %s is %s)", lua.NotEnoughMemory, e.PID, sizeText(e.Held), which, sizeText(e.Bound))
}

// sizeText writes n bytes in MB (or KB, or bytes).
func sizeText(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// memBounds is a runtime's: its bounds, the watchdog's view of the heap,
// and the processes that count the most.
type memBounds struct {
	runtime int64 // Options.MaxMemory resolved; 0: none
	process int64 // Options.MaxProcessMemory; 0: none

	heap     atomic.Int64 // the Go heap's objects, last sampled
	reserved atomic.Int64 // large charges since that sample

	mu  sync.Mutex
	big map[*luaProcess]int64 // processes counting memPublish or more: their counts

	stop chan struct{} // closed by Shutdown: the watchdog ends
	done chan struct{} // closed by the watchdog when it has ended

	// ending: the Done of the process the watchdog ended last, until it
	// has ended or endingTicks pass memEndWait (the watchdog's own).
	ending      <-chan struct{}
	endingTicks int
	ended       bool // ending is closed: one more look, then another may be chosen
}

// DefaultMaxMemory is the runtime's bound when Options.MaxMemory is 0:
// three quarters of the machine's memory (or of the cgroup's limit,
// when lower); 0 when neither can be read.
func DefaultMaxMemory() int64 {
	total := machineMemory()
	return total / 4 * 3
}

// newMemBounds resolves the options' bounds; a runtime bound starts the
// watchdog.
func newMemBounds(opts Options, kill memKill) *memBounds {
	m := &memBounds{process: max(opts.MaxProcessMemory, 0), big: map[*luaProcess]int64{}}
	if !memAccounting {
		return m // the noaccounting build: no bounds (accounting_off.go)
	}
	switch {
	case opts.MaxMemory > 0:
		m.runtime = opts.MaxMemory
	case opts.MaxMemory == 0:
		m.runtime = DefaultMaxMemory()
	}
	if m.runtime > 0 {
		if cur := debug.SetMemoryLimit(-1); cur > m.runtime {
			debug.SetMemoryLimit(m.runtime)
		}
		m.stop, m.done = make(chan struct{}), make(chan struct{})
		m.heap.Store(heapObjects())
		go m.watch(kill)
	}
	return m
}

// close ends the watchdog.
func (m *memBounds) close() {
	if m.stop != nil {
		select {
		case <-m.stop:
		default:
			close(m.stop)
			<-m.done
		}
	}
}

// fits reserves n bytes of the runtime's bound, or reports that they do
// not fit.
func (m *memBounds) fits(n int64) bool {
	if m.runtime <= 0 {
		return true
	}
	if m.heap.Load()+m.reserved.Add(n) > m.runtime {
		m.reserved.Add(-n)
		return false
	}
	return true
}

// publish lists p with its count (or removes it, count < memPublish).
func (m *memBounds) publish(p *luaProcess, count int64) {
	m.mu.Lock()
	if count >= memPublish {
		m.big[p] = count
	} else {
		delete(m.big, p)
	}
	m.mu.Unlock()
}

// biggest is the listed process that counts the most, or nil.
func (m *memBounds) biggest() (*luaProcess, int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var top *luaProcess
	var most int64
	for p, n := range m.big {
		if n > most {
			top, most = p, n
		}
	}
	return top, most
}

// heapObjects is the bytes of the Go heap's objects, garbage not yet
// swept included.
func heapObjects() int64 { return int64(lua.HeapBytes()) }

// liveHeap is the heap that the last collection found live.
func liveHeap() int64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int64(s[0].Value.Uint64())
}

// watch is the watchdog: it samples the heap every memTick (every ten
// while the heap is under half the bound) until close.
func (m *memBounds) watch(kill memKill) {
	defer close(m.done)
	t := time.NewTicker(memTick)
	defer t.Stop()
	idle := 0
	for {
		select {
		case <-m.stop:
			return
		case <-t.C:
		}
		heap := heapObjects()
		m.heap.Store(heap)
		m.reserved.Store(0)
		if heap < m.runtime/2 && idle < 9 {
			idle++ // far from the bound: look again in ten ticks
			continue
		}
		idle = 0
		if heap > m.killLine() {
			m.overBound(kill)
		}
	}
}

// killLine is the live heap past which the watchdog ends a process: 7/8
// of the bound. Go's memory limit is the bound itself, so Go collects
// ever harder as the live heap nears it, and the heap never passes it
// while the program slows to a crawl: the last eighth is the collector's
// room to work.
func (m *memBounds) killLine() int64 { return m.runtime / 8 * 7 }

// overBound collects, and kills the process that counts the most if what
// is live still passes the bound.
func (m *memBounds) overBound(kill memKill) {
	runtime.GC()
	live := liveHeap()
	m.heap.Store(heapObjects())
	if live <= m.killLine() || m.stillEnding() {
		return
	}
	p, held := m.biggest()
	if p == nil {
		return
	}
	m.publish(p, 0) // not chosen again before it counts again
	m.ending, m.endingTicks, m.ended = kill(p, &MemoryError{PID: int64(p.pid), Held: held, Bound: m.runtime, Runtime: true}), 0, false
}

// memKill ends a process for the watchdog and returns its Done (nil if it
// has ended already).
type memKill func(p *luaProcess, err error) <-chan struct{}

// stillEnding reports whether what the process the watchdog ended last
// held may still be live: the process has yet to end, or has ended since
// the last look (a collection after its end can find part of it live
// still — what sync.Pool's victim cache or a finalizer holds lives one
// cycle more —, so one more look, one more collection, comes first),
// until memEndWait looks have passed.
func (m *memBounds) stillEnding() bool {
	if m.ending == nil {
		return false
	}
	if m.endingTicks++; m.endingTicks >= memEndWait {
		m.ending, m.ended = nil, false
		return false
	}
	if m.ended {
		m.ending, m.ended = nil, false
		return false
	}
	select {
	case <-m.ending:
		m.ended = true
	default:
	}
	return true
}

// MemoryCharge implements lua.MemoryOwner (lua/memory.go): p's grant is
// spent by a charge of n bytes.
func (p *luaProcess) MemoryCharge(L *lua.LState, n int64) (grant int64, ok bool) {
	m := p.rt.mem
	used := p.memEnd() - L.MemoryGrant() // n included
	if (m.process > 0 && used > m.process) || used > p.memPace() {
		base := p.measure()
		p.setBase(base)
		used = base + n
	}
	switch {
	case m.process > 0 && (p.memBase() > m.process || p.mustTake(L) && used > m.process):
		// over its bound already, or taking in what it cannot refuse
		p.rt.kill(p, &MemoryError{PID: int64(p.pid), Held: used, Bound: m.process})
		return p.grantFrom(used), p.mustTake(L)
	case p.mustTake(L):
	case m.process > 0 && used > m.process:
		return p.grantFrom(used - n), false
	case n >= memBigCharge && !m.fits(n):
		return p.grantFrom(used - n), false
	}
	if used >= memPublish || p.memEnd() >= memPublish {
		m.publish(p, used)
	}
	return p.grantFrom(used), true
}

// mustTake reports whether a charge to p in L cannot be refused: on its
// main state, which runs only the process's own Go code between resumes
// (nothing would catch a refusal there), or while a message is converted
// for it (a refusal would lose it).
func (p *luaProcess) mustTake(L *lua.LState) bool { return L == p.L || p.taking }

// memPace is the count at which p's memory is walked again.
func (p *luaProcess) memPace() int64 {
	base := p.memBase()
	return max(2*base, base+memPaceFloor)
}

// grantFrom is p's next grant, p counting used bytes: up to memGrant,
// the pace and the process's bound.
func (p *luaProcess) grantFrom(used int64) int64 {
	g := min(int64(memGrant), p.memPace()-used)
	if b := p.rt.mem.process; b > 0 {
		g = min(g, b-used)
	}
	end := (used + max(g, 1)) &^ 1023 // a whole KB (memEndKB)
	if end <= used {
		end = (used + 1024) &^ 1023
	}
	p.memEndKB = uint32(min(end>>10, math.MaxUint32))
	return end - used
}

// memEnd is the count at which p's grant runs out, in bytes.
func (p *luaProcess) memEnd() int64 { return int64(p.memEndKB) << 10 }

// memBase is what p's last walk found it holding, in bytes (KB precise).
func (p *luaProcess) memBase() int64 { return int64(p.memBaseKB) << 10 }

// setBase records a walk's result.
func (p *luaProcess) setBase(n int64) { p.memBaseKB = uint32(min(n>>10, math.MaxUint32)) }

// measure walks what p can reach (lua.Measure): its state, globals and
// registry, and its tasks' coroutines.
func (p *luaProcess) measure() int64 {
	return lua.Measure(p.roots(false)...)
}

// roots is what p holds of its state's Lua values from Go: its state,
// globals and registry, its tasks' coroutines and arguments, the package
// tables; and, with all, the rest of what its tasks hold (a function not
// yet started, process.all's results, a receive's match function) and
// the last sender's value — the roots the __gc walk needs (lua/gc.go).
func (p *luaProcess) roots(all bool) []lua.LValue {
	roots := []lua.LValue{p.L, p.L.G.Global}
	if reg := p.L.G.RegistryIfMade(); reg != nil {
		roots = append(roots, reg)
	}
	var addTask func(t *task)
	addTask = func(t *task) {
		if t == nil {
			return
		}
		roots = append(roots, t.co)
		roots = append(roots, t.args...)
		if all && t.all != nil {
			roots = append(roots, t.all.results...)
			roots = append(roots, t.all.errValue)
		}
		if all {
			if t.fn != nil {
				roots = append(roots, t.fn)
			}
			if t.match != nil {
				roots = append(roots, t.match)
			}
		}
		if t.all != nil {
			for _, c := range t.all.children {
				addTask(c)
			}
		}
	}
	addTask(p.root)
	if all {
		addTask(p.current)
	}
	for _, t := range p.ready {
		addTask(t)
	}
	for _, t := range p.receivers {
		addTask(t)
	}
	for _, w := range p.waiting {
		addTask(w.t)
	}
	for th := range p.pthreads {
		roots = append(roots, th)
	}
	if p.mods != nil {
		roots = append(roots, p.mods.pkg, p.mods.loaded)
		if all {
			for _, l := range p.mods.loads {
				if l.thread != nil {
					roots = append(roots, l.thread)
				}
				addTask(l.task)
				for _, w := range l.waiters {
					addTask(w)
				}
			}
		}
	}
	if all && p.lastFromV != nil {
		roots = append(roots, p.lastFromV)
	}
	return roots
}

// gcRoots is the state's lua.Global.GCRoots while p runs in it.
func (p *luaProcess) gcRoots() []lua.LValue { return p.roots(true) }

// startMemory gives p's state its first grant (a new or recycled state).
func (p *luaProcess) startMemory() {
	if !memAccounting {
		return // nothing charged: no grant to give (accounting_off.go)
	}
	p.memBaseKB = 0
	p.L.SetMemoryGrant(p.grantFrom(0))
}

// endMemory takes p off the watchdog's list.
func (p *luaProcess) endMemory() {
	if p.memEnd() >= memPublish {
		p.rt.mem.publish(p, 0)
	}
}

// MemoryCount implements lua.MemoryCounter: what p counts, in bytes
// (collectgarbage("count"), gcinfo), re-based on a walk first when
// collect is set (collectgarbage("collect")).
func (p *luaProcess) MemoryCount(L *lua.LState, collect bool) int64 {
	if collect {
		base := p.measure()
		p.setBase(base)
		L.SetMemoryGrant(p.grantFrom(base))
	}
	return p.memEnd() - L.MemoryGrant()
}

// kill ends p with err (from any goroutine).
func (rt *Runtime) kill(p *luaProcess, err error) {
	if p.pid != 0 {
		rt.sched.Kill(p.pid, err) // an error: it has ended already
	}
}

// killForMemory is the watchdog's kill: it returns the process's Done.
func (rt *Runtime) killForMemory(p *luaProcess, err error) <-chan struct{} {
	h, ok := rt.sched.Lookup(p.pid)
	if !ok || p.pid == 0 {
		return nil
	}
	rt.kill(p, err)
	return h.Done()
}
