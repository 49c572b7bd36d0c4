package scheduler

// Names: a registry of live processes by name.
//
// A name maps to one live process; a process may hold several. Register
// takes the registry's mutex, then the process's relations' (links.go),
// so that a process that is ending either gets the name and gives it
// back in endRelations, or is refused. endRelations releases a process's
// names after closing its relations, under the registry's mutex, and
// only those still mapping to it.

import (
	"fmt"
	"sync"
)

type names struct {
	mu     sync.Mutex
	byName map[string]*proc
}

// Register gives process pid the name. It fails with ErrNameTaken if a
// live process holds it, and with ErrNoProcess if pid has ended.
func (s *Scheduler) Register(name string, pid PID) error {
	p := s.table.get(pid)
	if p == nil {
		return fmt.Errorf("register %q: %w", name, ErrNoProcess)
	}
	n := &s.names
	n.mu.Lock()
	defer n.mu.Unlock()
	if holder, ok := n.byName[name]; ok {
		if holder == p {
			return nil
		}
		return fmt.Errorf("register %q: %w (by process %d)", name, ErrNameTaken, holder.pid)
	}
	r := p.rels()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return fmt.Errorf("register %q: %w", name, ErrNoProcess)
	}
	if n.byName == nil {
		n.byName = map[string]*proc{}
	}
	n.byName[name] = p
	r.names = append(r.names, name)
	return nil
}

// Unregister releases name; it reports whether a process held it.
func (s *Scheduler) Unregister(name string) bool {
	return s.UnregisterPID(name, 0)
}

// UnregisterPID forgets name if process pid holds it (any process, if
// pid is 0), and reports whether it did.
func (s *Scheduler) UnregisterPID(name string, pid PID) bool {
	p := s.names.unregister(name, pid)
	if p == nil {
		return false
	}
	s.releaseNames(p.pid, []string{name})
	return true
}

// unregister forgets name and returns the process that held it, or nil.
func (n *names) unregister(name string, pid PID) *proc {
	n.mu.Lock()
	defer n.mu.Unlock()
	p, ok := n.byName[name]
	if !ok || (pid != 0 && p.pid != pid) {
		return nil
	}
	delete(n.byName, name)
	if r := p.rel.Load(); r != nil {
		r.mu.Lock()
		for i, nm := range r.names {
			if nm == name {
				r.names = append(r.names[:i], r.names[i+1:]...)
				break
			}
		}
		r.mu.Unlock()
	}
	return p
}

// Whereis returns the process registered under name.
func (s *Scheduler) Whereis(name string) (PID, bool) {
	n := &s.names
	n.mu.Lock()
	defer n.mu.Unlock()
	if p, ok := n.byName[name]; ok {
		return p.pid, true
	}
	return 0, false
}

// release forgets the names of p, which has ended.
func (n *names) release(p *proc, held []string) {
	if len(held) == 0 {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, name := range held {
		if n.byName[name] == p {
			delete(n.byName, name)
		}
	}
}
