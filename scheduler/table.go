package scheduler

import (
	"sync"
	"sync/atomic"
)

// table maps PIDs to live processes without a lock on its hot paths.
//
// PIDs are handed out in order, so the table is a directory of pages, each
// holding pageSize consecutive PIDs' slots: put, get and remove are one
// atomic access to a slot. A page is created (under mu) when the first of
// its PIDs is put, and freed (under mu) when every one of its PIDs has been
// released — removed after its process ended, or never put because Init
// failed. Each PID is released exactly once, so a page's remaining count
// reaches zero exactly once.
//
// The directory grows by one pointer per pageSize PIDs ever handed out
// (8 bytes per 1,024 spawns); the pages themselves hold only live PIDs'
// neighbourhoods.
type table struct {
	// dir: replaced (copy-on-write, under mu) when it grows; its entries are
	// set under mu and read by anyone.
	dir atomic.Pointer[[]atomic.Pointer[page]]
	mu  sync.Mutex
	// node: this node's bits of every PID in the table (relay.go); set
	// before the first put, then only read. A PID with other node bits
	// is not in the table.
	node PID
}

const pageSize = 1024

type page struct {
	slots [pageSize]atomic.Pointer[proc]
	// remaining: PIDs of this page not yet released. Starts at pageSize.
	remaining atomic.Int32
}

// split places a PID of this node: its local count's page and slot.
func split(pid PID) (dirIndex int, slot int) {
	local := pid & localMask
	return int(local / pageSize), int(local % pageSize)
}

// page returns the page for dirIndex, or nil.
func (t *table) page(dirIndex int) *page {
	d := t.dir.Load()
	if d == nil || dirIndex >= len(*d) {
		return nil
	}
	return (*d)[dirIndex].Load()
}

func (t *table) put(p *proc) {
	i, slot := split(p.pid)
	pg := t.page(i)
	if pg == nil {
		pg = t.makePage(i)
	}
	pg.slots[slot].Store(p)
}

func (t *table) makePage(i int) *page {
	t.mu.Lock()
	defer t.mu.Unlock()
	d := t.dir.Load()
	if d == nil || i >= len(*d) {
		n := max(16, 2*(i+1))
		grown := make([]atomic.Pointer[page], n)
		if d != nil {
			for j := range *d {
				grown[j].Store((*d)[j].Load())
			}
		}
		t.dir.Store(&grown)
		d = &grown
	}
	if pg := (*d)[i].Load(); pg != nil {
		return pg
	}
	pg := new(page)
	pg.remaining.Store(pageSize)
	if i == 0 {
		pg.remaining.Add(-1) // PID 0 is never handed out
	}
	(*d)[i].Store(pg)
	return pg
}

func (t *table) get(pid PID) *proc {
	if pid&^localMask != t.node {
		return nil // another node's (relay.go)
	}
	i, slot := split(pid)
	if pg := t.page(i); pg != nil {
		return pg.slots[slot].Load()
	}
	return nil
}

// remove forgets pid's process and releases the PID.
func (t *table) remove(pid PID) {
	i, slot := split(pid)
	if pg := t.page(i); pg != nil {
		pg.slots[slot].Store(nil)
	}
	t.release(pid)
}

// release marks pid as done with; the last release of a page frees it.
func (t *table) release(pid PID) {
	i, _ := split(pid)
	pg := t.page(i)
	if pg == nil {
		pg = t.makePage(i) // a PID released without ever being put
	}
	if pg.remaining.Add(-1) == 0 {
		t.mu.Lock()
		(*t.dir.Load())[i].Store(nil)
		t.mu.Unlock()
	}
}

// all returns the live processes.
func (t *table) all() []*proc {
	var out []*proc
	d := t.dir.Load()
	if d == nil {
		return nil
	}
	for i := range *d {
		pg := (*d)[i].Load()
		if pg == nil {
			continue
		}
		for j := range pg.slots {
			if p := pg.slots[j].Load(); p != nil {
				out = append(out, p)
			}
		}
	}
	return out
}
