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
// queue into its own deque at once (docs/architecture.md, "Workers and queues").
const globalBatch = 16
