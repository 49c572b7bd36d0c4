package mpsc_test

import (
	"fmt"
	"sync"

	"github.com/luarun/luarun/mpsc"
)

// Producers push from any goroutine; the one consumer pops and keeps the
// nodes Pop hands back for later pushes of its own.
func Example() {
	q := mpsc.New[string]()
	var wg sync.WaitGroup
	for _, who := range []string{"alice", "bob"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n := new(mpsc.Node[string])
			n.Value = "hello from " + who
			q.Push(n)
		}()
	}
	wg.Wait()

	var free []*mpsc.Node[string]
	got := map[string]bool{}
	for q.Pending() {
		v, n, ok := q.Pop()
		if !ok {
			continue // a push is still linking; it will show up
		}
		got[v] = true
		free = append(free, n)
	}
	fmt.Println(got["hello from alice"], got["hello from bob"], len(free))
	// Output: true true 2
}

// A producer that places items in two queues and must not let either be
// seen before both are placed reserves both, then commits them. Whatever
// is pushed meanwhile comes out behind the reserved item.
func ExampleQueue_Reserve() {
	a, b := mpsc.New[string](), mpsc.New[string]()
	na, nb := &mpsc.Node[string]{Value: "end"}, &mpsc.Node[string]{Value: "end"}
	ra, rb := a.Reserve(na), b.Reserve(nb)

	b.Push(&mpsc.Node[string]{Value: "after"}) // another producer
	_, _, ok := b.Pop()
	fmt.Println("before commit:", ok, b.Pending())

	ra.Commit()
	rb.Commit()
	for b.Pending() {
		v, _, _ := b.Pop()
		fmt.Println(v)
	}
	v, _, _ := a.Pop()
	fmt.Println(v)
	// Output:
	// before commit: false true
	// end
	// after
	// end
}
