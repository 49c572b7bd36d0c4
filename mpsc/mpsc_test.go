package mpsc

import (
	"fmt"
	"runtime"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func node(v int) *Node[int] {
	n := new(Node[int])
	n.Value = v
	return n
}

func TestEmpty(t *testing.T) {
	q := New[int]()
	_, _, ok := q.Pop()
	require.False(t, ok)
	require.False(t, q.Pending())
}

func TestFIFOAndNodeReuse(t *testing.T) {
	q := New[int]()
	for i := range 5 {
		q.Push(node(i))
	}
	require.True(t, q.Pending())
	var free []*Node[int]
	for i := range 5 {
		v, n, ok := q.Pop()
		require.True(t, ok)
		require.Equal(t, i, v)
		require.NotNil(t, n)
		free = append(free, n)
	}
	_, _, ok := q.Pop()
	require.False(t, ok)
	require.False(t, q.Pending())

	// The freed nodes carry new values through the queue.
	for i, n := range free {
		n.Value = 100 + i
		q.Push(n)
	}
	for i := range free {
		v, _, ok := q.Pop()
		require.True(t, ok)
		require.Equal(t, 100+i, v)
	}
}

// TestPushInProgress shows the consumer's view of a producer stopped between
// its swap and its link: Pop sees nothing, Pending says something is coming,
// and once the link lands every item comes out in order.
func TestPushInProgress(t *testing.T) {
	q := New[int]()
	q.Push(node(1))

	r := q.Reserve(node(2)) // Push's first half
	q.Push(node(3))         // another producer finishes behind it

	v, _, ok := q.Pop()
	require.True(t, ok)
	require.Equal(t, 1, v)
	_, _, ok = q.Pop()
	require.False(t, ok, "the chain is broken at the unfinished push")
	require.True(t, q.Pending())

	r.Commit() // Push's second half
	for _, want := range []int{2, 3} {
		v, _, ok = q.Pop()
		require.True(t, ok)
		require.Equal(t, want, v)
	}
	require.False(t, q.Pending())
}

// TestConservation: producers × items, every item consumed exactly once and
// each producer's items in the order it pushed them. With recycle, nodes go
// back to the producers through a channel, so each node is reused many times.
func TestConservation(t *testing.T) {
	perProducer := 200000
	if raceEnabled {
		perProducer = 20000
	}
	for _, producers := range []int{1, 2, 4, 8} {
		for _, recycle := range []bool{false, true} {
			name := fmt.Sprintf("producers=%d/recycle=%v", producers, recycle)
			t.Run(name, func(t *testing.T) {
				runConservation(t, producers, perProducer, recycle)
			})
		}
	}
}

func runConservation(t *testing.T, producers, perProducer int, recycle bool) {
	q := New[[2]int]()
	free := make(chan *Node[[2]int], 1024)
	if recycle {
		for range cap(free) {
			free <- new(Node[[2]int])
		}
	}
	var wg sync.WaitGroup
	for p := range producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perProducer {
				var n *Node[[2]int]
				if recycle {
					n = <-free
				} else {
					n = new(Node[[2]int])
				}
				n.Value = [2]int{p, i}
				q.Push(n)
			}
		}()
	}

	next := make([]int, producers) // the item expected next from each producer
	for got := 0; got < producers*perProducer; {
		v, n, ok := q.Pop()
		if !ok {
			runtime.Gosched()
			continue
		}
		got++
		p, i := v[0], v[1]
		if i != next[p] {
			t.Fatalf("producer %d: got item %d, want %d", p, i, next[p])
		}
		next[p]++
		if recycle {
			free <- n
		}
	}
	wg.Wait()
	_, _, ok := q.Pop()
	require.False(t, ok, "an item came out that was never pushed")
	for p, n := range next {
		require.Equal(t, perProducer, n, "producer %d", p)
	}
}
