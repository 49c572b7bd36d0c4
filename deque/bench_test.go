package deque

import (
	"sync"
	"sync/atomic"
	"testing"
)

// mutexDeque is the baseline: a slice guarded by a mutex, with the same
// owner-LIFO / thief-FIFO roles.
type mutexDeque struct {
	mu    sync.Mutex
	items []*int
	head  int
}

func (m *mutexDeque) push(x *int) {
	m.mu.Lock()
	m.items = append(m.items, x)
	m.mu.Unlock()
}

func (m *mutexDeque) pop() *int {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.items) == m.head {
		return nil
	}
	x := m.items[len(m.items)-1]
	m.items = m.items[:len(m.items)-1]
	if len(m.items) == m.head {
		m.items, m.head = m.items[:0], 0
	}
	return x
}

func (m *mutexDeque) steal() *int {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.items) == m.head {
		return nil
	}
	x := m.items[m.head]
	m.head++
	return x
}

var sink *int

// BenchmarkPushPop: the owner pushes one item and pops it back, on an
// otherwise empty deque (the scheduler's common case), and with a standing
// backlog of 64 items (the fast path).
func BenchmarkPushPop(b *testing.B) {
	v := new(int)
	b.Run("deque/empty", func(b *testing.B) {
		d := New[*int](64)
		b.ReportAllocs()
		for b.Loop() {
			d.PushBottom(v)
			sink, _ = d.PopBottom()
		}
	})
	b.Run("deque/backlog64", func(b *testing.B) {
		d := New[*int](128)
		for range 64 {
			d.PushBottom(v)
		}
		b.ReportAllocs()
		for b.Loop() {
			d.PushBottom(v)
			sink, _ = d.PopBottom()
		}
	})
	b.Run("mutex+slice", func(b *testing.B) {
		m := &mutexDeque{items: make([]*int, 0, 128)}
		b.ReportAllocs()
		for b.Loop() {
			m.push(v)
			sink = m.pop()
		}
	})
	b.Run("chan", func(b *testing.B) {
		c := make(chan *int, 128)
		b.ReportAllocs()
		for b.Loop() {
			c <- v
			sink = <-c
		}
	})
	// floor: the two sequentially consistent atomic writes a push and a
	// pop need at the least (Go has no release-only store).
	b.Run("floor-2-atomic-stores", func(b *testing.B) {
		var x, y atomic.Uint32
		for i := 0; b.Loop(); i++ {
			x.Store(uint32(i))
			y.Store(uint32(i))
		}
	})
}

// BenchmarkSteal: uncontended single-item steals. The owner refills the
// deque, untimed, every 1<<16 steals; the baselines do the same.
func BenchmarkSteal(b *testing.B) {
	const chunk = 1 << 16
	v := new(int)
	b.Run("deque", func(b *testing.B) {
		d := New[*int](chunk)
		for i := 0; i < b.N; i++ {
			x, ok := d.Steal()
			if !ok {
				b.StopTimer()
				for range chunk {
					d.PushBottom(v)
				}
				b.StartTimer()
				x, _ = d.Steal()
			}
			sink = x
		}
	})
	b.Run("mutex+slice", func(b *testing.B) {
		m := &mutexDeque{items: make([]*int, 0, chunk)}
		for i := 0; i < b.N; i++ {
			x := m.steal()
			if x == nil {
				b.StopTimer()
				m.items, m.head = m.items[:0], 0
				for range chunk {
					m.push(v)
				}
				b.StartTimer()
				x = m.steal()
			}
			sink = x
		}
	})
	b.Run("chan", func(b *testing.B) {
		c := make(chan *int, chunk)
		for i := 0; i < b.N; i++ {
			select {
			case x := <-c:
				sink = x
			default:
				b.StopTimer()
				for range chunk {
					c <- v
				}
				b.StartTimer()
				sink = <-c
			}
		}
	})
}

// BenchmarkStealHalf: StealHalfInto from a large deque into the caller's
// own, reported per call and per item moved (MaxSteal per call here). The
// deques are refilled and drained, untimed, every 1<<16 items.
func BenchmarkStealHalf(b *testing.B) {
	const chunk = 1 << 16
	v := new(int)
	src, dst := New[*int](chunk), New[*int](chunk)
	moved := 0
	for i := 0; i < b.N; i++ {
		if src.Len() < 2*MaxSteal {
			b.StopTimer()
			for dst.Len() > 0 {
				dst.PopBottom()
			}
			for src.Len() < chunk {
				src.PushBottom(v)
			}
			b.StartTimer()
		}
		moved += src.StealHalfInto(dst)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(moved), "ns/item")
}
