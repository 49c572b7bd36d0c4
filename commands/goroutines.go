package commands

// goroutinePool runs the I/O commands' goroutines. A goroutine that
// finishes a call parks for the next one instead of exiting, keeping the
// stack it grew: an HTTP round trip grows a fresh goroutine's stack from
// 8 KB to 32 KB, and those copies (runtime.copystack, with its pcvalue
// lookups) were the largest cost luarun added to a loopback request in
// the http benchmark, which goroutines that each make 20 requests pay
// only once.
//
// Invariants: a goroutine's channel is in idle from the moment it parks
// (park appends it) until someone removes it; the goroutine receives from
// it next, and nothing else does. Whoever removes it from idle (Go, the
// sweeper, or Close) is the only one to use the channel next: Go sends
// one function (the buffer of 1 means the send never blocks, even before
// the goroutine reaches its receive), the sweeper and Close close it,
// which makes the goroutine exit. So no function is lost and none runs
// twice.
//
// Idle goroutines exit after idleTime. Rather than a timer per parked
// goroutine (a Reset and a Stop per call, and a select), one sweeper timer
// is armed while any goroutine is parked: idle is ordered by parking time
// (Go takes from the end, the most recent; the sweeper from the front),
// so it closes the channels at the front that have waited long enough and
// re-arms for the next one.

import (
	"sync"
	"time"
)

const (
	maxIdleGoroutines = 1024             // more finishing at once exit
	goroutineIdleTime = 10 * time.Second // a parked goroutine exits after this
)

type goroutinePool struct {
	idleTime time.Duration // 0: goroutineIdleTime (tests shorten it)

	// running counts the functions given to Go that have not returned.
	running sync.WaitGroup

	mu      sync.Mutex
	idle    []parkedGoroutine // oldest first
	sweeper *time.Timer       // armed while idle is not empty; nil before first use
	armed   bool
	closed  bool // set by Close: goroutines exit instead of parking
}

// parkedGoroutine is an idle goroutine: its channel, and when it parked.
type parkedGoroutine struct {
	ch    chan func()
	since time.Time
}

// Go runs f on a parked goroutine, or on a new one.
func (p *goroutinePool) Go(f func()) {
	p.running.Add(1)
	p.mu.Lock()
	if n := len(p.idle); n > 0 {
		ch := p.idle[n-1].ch
		p.idle[n-1] = parkedGoroutine{}
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		ch <- f
		return
	}
	p.mu.Unlock()
	go p.serve(make(chan func(), 1), f)
}

// Close makes the parked goroutines exit, and the busy ones exit when
// they finish. Go still works afterwards (each call on a new goroutine).
func (p *goroutinePool) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	for _, g := range p.idle {
		close(g.ch)
	}
	p.idle = nil
	if p.sweeper != nil {
		p.sweeper.Stop()
	}
	p.armed = false
}

func (p *goroutinePool) serve(ch chan func(), f func()) {
	for f != nil {
		p.run(f)
		f = nil // let it be collected while parked
		if !p.park(ch) {
			return
		}
		f = <-ch // nil once closed: the sweeper or Close
	}
}

func (p *goroutinePool) run(f func()) {
	defer p.running.Done()
	f()
}

// park puts ch in idle; false means exit instead.
func (p *goroutinePool) park(ch chan func()) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || len(p.idle) >= maxIdleGoroutines {
		return false
	}
	p.idle = append(p.idle, parkedGoroutine{ch, time.Now()})
	if !p.armed {
		p.arm(p.idleFor())
	}
	return true
}

func (p *goroutinePool) idleFor() time.Duration {
	if p.idleTime == 0 {
		return goroutineIdleTime
	}
	return p.idleTime
}

// arm starts the sweeper to run after d (under mu).
func (p *goroutinePool) arm(d time.Duration) {
	p.armed = true
	if p.sweeper == nil {
		p.sweeper = time.AfterFunc(d, p.sweep)
		return
	}
	p.sweeper.Reset(d)
}

// sweep closes the channels of the goroutines parked for idleTime or
// longer, and re-arms for the oldest of the others.
func (p *goroutinePool) sweep() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.armed = false
	if p.closed {
		return
	}
	now, wait := time.Now(), p.idleFor()
	expired := 0
	for expired < len(p.idle) && now.Sub(p.idle[expired].since) >= wait {
		close(p.idle[expired].ch)
		expired++
	}
	n := copy(p.idle, p.idle[expired:])
	clear(p.idle[n:])
	p.idle = p.idle[:n]
	if n > 0 {
		p.arm(wait - now.Sub(p.idle[0].since))
	}
}
