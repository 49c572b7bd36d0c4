// Package mpsc is a lock-free multi-producer single-consumer FIFO queue
// (Dmitry Vyukov's node-based design) whose nodes the caller recycles, so a
// push allocates nothing in steady state.
//
// # Algorithm
//
// The queue is a singly linked list from head (the consumer's end) to tail
// (the producers' end). head always points at a dummy node whose value has
// already been consumed; the first live item is head.next.
//
//	Push(n): n.next = nil; prev = tail.Swap(n); prev.next = n
//	Pop():   next = head.next; if next == nil: empty
//	         value = next.Value; freed = head; head = next
//
// A producer makes its node the tail with one atomic swap, then links the
// previous tail to it. The swap orders producers: each producer's items keep
// their order, and items from different producers are ordered by their swaps.
// The consumer moves head forward and copies the value out; the node that
// carried the value becomes the new dummy, and the old dummy is handed back
// to the caller for reuse. Pop never waits and never writes shared state.
//
// # Fields and who touches them
//
//   - tail: swapped by every producer; the consumer never reads it.
//   - node.next: written (once per use) by the producer that swaps in the
//     following node, and read by the consumer.
//   - head: the consumer's alone.
//
// # A push in progress looks like an empty queue
//
// Between a producer's swap and its link, the chain is broken at that node:
// Pop reports empty (ok == false) although the item, and any pushed after it
// by other producers, is already "in" the queue. Nothing is lost; the items
// appear once the producer links. A consumer that sleeps when it sees an
// empty queue must therefore be woken by the producer after Push returns
// (publish, then signal), never rely on having seen the item before sleeping.
// Pending reports whether any item is queued or in flight, so a consumer can
// tell "empty" from "a push is finishing" and retry instead of sleeping.
// Reserve and Commit are Push's two halves, for a producer that holds the
// chain broken on purpose while it places items in several queues.
//
// # Node reuse
//
// Push takes ownership of the node until Pop hands it (or another node of
// this queue) back as free. A node must be pushed to one queue at a time.
package mpsc

import "sync/atomic"

// Node carries one value through a Queue. Allocate nodes with new(Node[T])
// and reuse the ones Pop returns.
type Node[T any] struct {
	next  atomic.Pointer[Node[T]]
	Value T
}

// Queue is an unbounded MPSC queue. The zero value is not usable; call New,
// or Init on a Queue embedded in another struct.
type Queue[T any] struct {
	// tail is the most recently pushed node; written by producers (Swap).
	//
	// No cache-line padding between tail and head: luarun embeds one queue
	// in every process record (tens of thousands of them), where 64 bytes
	// each cost more than the false sharing, which only touches the
	// consumer's load of head while a producer swaps tail.
	tail atomic.Pointer[Node[T]]
	// head is the dummy before the first live item; consumer only.
	head *Node[T]
}

// New returns an empty queue.
func New[T any]() *Queue[T] {
	q := new(Queue[T])
	q.Init()
	return q
}

// Init makes q an empty queue. It must be called before any other method
// and while no other goroutine uses q.
func (q *Queue[T]) Init() { q.InitWithStub(new(Node[T])) }

// InitWithStub is Init with a caller-supplied first dummy node (say, one
// embedded in the struct that holds q, to save an allocation). stub must
// be unused; like every node, it may later be handed out by Pop — and a
// caller that recycles the nodes Pop frees must not recycle an embedded
// stub, or whatever reuses it keeps the struct around it alive.
func (q *Queue[T]) InitWithStub(stub *Node[T]) {
	stub.next.Store(nil)
	q.head = stub
	q.tail.Store(stub)
}

// Push appends n, with its Value already set. Any goroutine may call it.
// The queue owns n from now on.
func (q *Queue[T]) Push(n *Node[T]) {
	n.next.Store(nil)
	prev := q.tail.Swap(n)
	raceWindow()
	// Between the swap and this store the queue looks empty from prev on.
	prev.next.Store(n)
}

// Reservation is a push begun by Reserve and not yet committed.
type Reservation[T any] struct {
	prev, n *Node[T]
}

// Reserve is Push's first half: n takes its place in the order of q's
// items (whatever is pushed after Reserve returns comes out after n), but
// the consumer sees neither n nor anything behind it until Commit, as if
// the producer had stopped between its swap and its link. Commit must
// follow, from any goroutine, or q is stuck. A producer that places items
// in several queues and must not let any of them be seen before all are
// placed reserves them all, then commits them.
func (q *Queue[T]) Reserve(n *Node[T]) Reservation[T] {
	n.next.Store(nil)
	return Reservation[T]{prev: q.tail.Swap(n), n: n}
}

// Commit finishes the push r began: the consumer can reach r's node.
func (r Reservation[T]) Commit() {
	raceWindow()
	r.prev.next.Store(r.n)
}

// Pop removes the oldest item and returns its value, plus a node the caller
// now owns and may reuse for a later Push (not necessarily the node that
// carried this value). ok is false when the queue is empty or the oldest
// push is still in progress (see Pending). Only the consumer may call it.
func (q *Queue[T]) Pop() (v T, free *Node[T], ok bool) {
	h := q.head
	next := h.next.Load()
	if next == nil {
		return v, nil, false
	}
	v = next.Value
	var zero T
	next.Value = zero // next is the new dummy; drop its reference
	q.head = next
	return v, h, true
}

// Pending reports whether an item is queued or a push has begun, even one
// Pop cannot return yet. Only the consumer may call it.
func (q *Queue[T]) Pending() bool {
	return q.tail.Load() != q.head
}
