package mpsc

import (
	"sync"
	"testing"
)

// mutexQueue is the baseline: a slice guarded by a mutex.
type mutexQueue struct {
	mu    sync.Mutex
	items []int
	head  int
}

func (m *mutexQueue) push(x int) {
	m.mu.Lock()
	m.items = append(m.items, x)
	m.mu.Unlock()
}

func (m *mutexQueue) pop() (int, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.head == len(m.items) {
		return 0, false
	}
	x := m.items[m.head]
	m.head++
	if m.head == len(m.items) {
		m.items, m.head = m.items[:0], 0
	}
	return x, true
}

var sink int

// BenchmarkPushPop: one push and one pop, with the node recycled.
func BenchmarkPushPop(b *testing.B) {
	b.Run("mpsc", func(b *testing.B) {
		q := New[int]()
		n := new(Node[int])
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			n.Value = i
			q.Push(n)
			sink, n, _ = q.Pop()
		}
	})
	b.Run("mutex+slice", func(b *testing.B) {
		m := &mutexQueue{items: make([]int, 0, 16)}
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			m.push(i)
			sink, _ = m.pop()
		}
	})
	b.Run("chan", func(b *testing.B) {
		c := make(chan int, 16)
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			c <- i
			sink = <-c
		}
	})
}

// BenchmarkProducers: GOMAXPROCS producers push while one consumer pops;
// ns/op is per item. mpsc recycles nodes through a sync.Pool, the way a
// caller without a natural owner for its nodes would.
func BenchmarkProducers(b *testing.B) {
	b.Run("mpsc", func(b *testing.B) {
		q := New[int]()
		pool := sync.Pool{New: func() any { return new(Node[int]) }}
		done := make(chan struct{})
		go func() {
			for got := 0; got < b.N; {
				if v, n, ok := q.Pop(); ok {
					sink = v
					pool.Put(n)
					got++
				}
			}
			close(done)
		}()
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for i := 0; pb.Next(); i++ {
				n := pool.Get().(*Node[int])
				n.Value = i
				q.Push(n)
			}
		})
		<-done
	})
	b.Run("mutex+slice", func(b *testing.B) {
		m := &mutexQueue{}
		done := make(chan struct{})
		go func() {
			for got := 0; got < b.N; {
				if v, ok := m.pop(); ok {
					sink = v
					got++
				}
			}
			close(done)
		}()
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for i := 0; pb.Next(); i++ {
				m.push(i)
			}
		})
		<-done
	})
	b.Run("chan", func(b *testing.B) {
		c := make(chan int, 4096)
		done := make(chan struct{})
		go func() {
			for range b.N {
				sink = <-c
			}
			close(done)
		}()
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for i := 0; pb.Next(); i++ {
				c <- i
			}
		})
		<-done
	})
}
