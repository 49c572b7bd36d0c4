package scheduler

import (
	"sync"
	"sync/atomic"
)

// globalQueue is the FIFO for new submissions and for processes made Ready
// off the workers (completions from handler goroutines, messages). It is a
// mutex-guarded ring; n mirrors its length so that workers can skip the
// lock when it is empty.
type globalQueue struct {
	mu   sync.Mutex
	buf  []*proc // ring, len a power of two
	head int     // index of the oldest entry
	size int     // entries in the ring (under mu)

	// n: written under mu, read without it by workers deciding whether to
	// look here.
	n atomic.Int64
}

func (q *globalQueue) push(p *proc) {
	q.mu.Lock()
	if q.size == len(q.buf) {
		q.grow()
	}
	q.buf[(q.head+q.size)&(len(q.buf)-1)] = p
	q.size++
	q.n.Store(int64(q.size))
	q.mu.Unlock()
}

func (q *globalQueue) grow() {
	next := make([]*proc, max(64, 2*len(q.buf)))
	for i := range q.size {
		next[i] = q.buf[(q.head+i)&(len(q.buf)-1)]
	}
	q.buf, q.head = next, 0
}

// get takes the oldest process and moves up to batch more into w's deque,
// but no more than a fair share (size/workers + 1) so that the other
// workers find some too.
func (q *globalQueue) get(w *worker, workers int) *proc {
	if q.n.Load() == 0 {
		return nil
	}
	q.mu.Lock()
	if q.size == 0 {
		q.mu.Unlock()
		return nil
	}
	take := min(q.size/workers+1, q.size, 1+globalBatch)
	mask := len(q.buf) - 1
	p := q.buf[q.head]
	q.buf[q.head] = nil
	for i := 1; i < take; i++ {
		j := (q.head + i) & mask
		w.local.PushBottom(q.buf[j])
		q.buf[j] = nil
	}
	q.head = (q.head + take) & mask
	q.size -= take
	q.n.Store(int64(q.size))
	q.mu.Unlock()
	return p
}

// globalBatch is how many extra processes a worker moves from the global
// queue into its own deque at once (DESIGN.md section 3).
const globalBatch = 16

// table maps PIDs to live processes, sharded to keep Send's lookup off a
// single lock.
type table struct {
	shards [tableShards]tableShard
}

const tableShards = 64

type tableShard struct {
	mu sync.RWMutex
	m  map[PID]*proc
	_  [40]byte // keep shards on separate cache lines
}

func (t *table) shard(pid PID) *tableShard { return &t.shards[uint64(pid)%tableShards] }

func (t *table) put(p *proc) {
	sh := t.shard(p.pid)
	sh.mu.Lock()
	if sh.m == nil {
		sh.m = make(map[PID]*proc)
	}
	sh.m[p.pid] = p
	sh.mu.Unlock()
}

func (t *table) get(pid PID) *proc {
	sh := t.shard(pid)
	sh.mu.RLock()
	p := sh.m[pid]
	sh.mu.RUnlock()
	return p
}

func (t *table) remove(pid PID) {
	sh := t.shard(pid)
	sh.mu.Lock()
	delete(sh.m, pid)
	sh.mu.Unlock()
}

// all returns the live processes.
func (t *table) all() []*proc {
	var out []*proc
	for i := range t.shards {
		sh := &t.shards[i]
		sh.mu.RLock()
		for _, p := range sh.m {
			out = append(out, p)
		}
		sh.mu.RUnlock()
	}
	return out
}
