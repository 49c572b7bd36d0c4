package commands

// goroutinePool runs the I/O commands' goroutines. A goroutine that
// finishes a call parks for the next one instead of exiting, keeping the
// stack it grew: an HTTP round trip grows a fresh goroutine's stack from
// 8 KB to 32 KB, and those copies (runtime.copystack, with its pcvalue
// lookups) were the largest cost luarun added to a loopback request in
// the http benchmark, which goroutines that each make 20 requests pay
// only once.
//
// Invariants: a parked goroutine's channel is in idle exactly while it
// waits in park's select; whoever removes it from idle (Go, the
// goroutine's own idle timer, or Close) is the only one to use the
// channel next: Go sends one function (the buffer of 1 means the send
// never blocks), Close closes it. So no function is lost and none runs
// twice.

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

	mu     sync.Mutex
	idle   []chan func() // parked goroutines; the most recently parked last
	closed bool          // set by Close: goroutines exit instead of parking
}

// Go runs f on a parked goroutine, or on a new one.
func (p *goroutinePool) Go(f func()) {
	p.mu.Lock()
	if n := len(p.idle); n > 0 {
		ch := p.idle[n-1]
		p.idle[n-1] = nil
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
	for _, ch := range p.idle {
		close(ch)
	}
	p.idle = nil
}

func (p *goroutinePool) serve(ch chan func(), f func()) {
	var idleTimer *time.Timer
	for f != nil {
		f()
		f = nil // let it be collected while parked
		if !p.park(ch) {
			return
		}
		wait := p.idleTime
		if wait == 0 {
			wait = goroutineIdleTime
		}
		if idleTimer == nil {
			idleTimer = time.NewTimer(wait)
		} else {
			idleTimer.Reset(wait)
		}
		select {
		case f = <-ch: // nil if closed
			idleTimer.Stop()
		case <-idleTimer.C:
			if p.unpark(ch) {
				return
			}
			f = <-ch // Go or Close took ch meanwhile: their use is on its way
		}
	}
}

// park puts ch in idle; false means exit instead.
func (p *goroutinePool) park(ch chan func()) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || len(p.idle) >= maxIdleGoroutines {
		return false
	}
	p.idle = append(p.idle, ch)
	return true
}

// unpark removes ch from idle; false means someone took it first.
func (p *goroutinePool) unpark(ch chan func()) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, c := range p.idle {
		if c == ch {
			p.idle = append(p.idle[:i], p.idle[i+1:]...)
			return true
		}
	}
	return false
}
