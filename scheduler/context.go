package scheduler

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// procContext is a process's context: the proc itself, seen as a
// context.Context ((*proc).context), so that the context costs a proc no
// PID or Interrupter of its own (a proc fits the 384-byte size class,
// TestProcFits). Most processes never look at it, so it creates its real
// context (context.WithCancelCause) only when something uses it: Done,
// Err or Value. Value delegates to the real context, which makes
// context.Cause, context.AfterFunc and contexts derived from this one
// behave exactly as with a plain cancel context (they find its cancelCtx
// through Value, without a goroutine).
type procContext proc

// ctxState is what a proc keeps for its context (proc.ctx).
type ctxState struct {
	// values: SubmitOptions.Context, whose values are the process's (not
	// its cancellation: killWhenDone); nil: none. Set before Init.
	values context.Context

	// real: nil until first use; written once under mu, read lock-free.
	real atomic.Pointer[realContext]
	mu   sync.Mutex
	// cause: the cancel cause recorded before the real context existed
	// (under mu).
	cause error
}

// context is p's context: the one Init gets, cancelled by Kill, the
// shutdown deadline, or the end.
func (p *proc) context() *procContext { return (*procContext)(p) }

// Interrupter is implemented by processes whose running step checks a
// flag of their own rather than their context's Done channel (a Lua
// process checks one before every instruction). Interrupt is called on
// the goroutine that cancelled the process's context, after the cancel;
// it must not block, and may be called more than once.
type Interrupter interface {
	Interrupt()
}

type realContext struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
}

var _ context.Context = (*procContext)(nil)

func (c *procContext) get() context.Context {
	st := &c.ctx
	if r := st.real.Load(); r != nil {
		return r.ctx
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if r := st.real.Load(); r != nil {
		return r.ctx
	}
	base := context.Background()
	if st.values != nil {
		base = context.WithoutCancel(st.values)
	}
	ctx, cancel := context.WithCancelCause(base)
	if st.cause != nil {
		cancel(st.cause)
	}
	st.real.Store(&realContext{ctx: ctx, cancel: cancel})
	return ctx
}

// cancel cancels the context with cause (the first cause wins).
func (c *procContext) cancel(cause error) {
	if c.interrupts {
		defer c.impl.(Interrupter).Interrupt() // after the cancel: Err answers it
	}
	st := &c.ctx
	if r := st.real.Load(); r != nil {
		r.cancel(cause)
		return
	}
	st.mu.Lock()
	r := st.real.Load()
	if r == nil && st.cause == nil {
		st.cause = cause
	}
	st.mu.Unlock()
	if r != nil {
		r.cancel(cause)
	}
}

// Deadline: a process context has none.
func (c *procContext) Deadline() (time.Time, bool) { return time.Time{}, false }

// Done is closed when the process is killed, abandoned or has ended.
func (c *procContext) Done() <-chan struct{} { return c.get().Done() }

// Err is context.Canceled once Done is closed. It does not make the real
// context: a process's end asks (a recycled state must not have been
// interrupted), and most processes never need one.
func (c *procContext) Err() error {
	st := &c.ctx
	if r := st.real.Load(); r != nil {
		return r.ctx.Err()
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if r := st.real.Load(); r != nil {
		return r.ctx.Err()
	}
	if st.cause != nil {
		return context.Canceled
	}
	return nil
}

// Value answers PIDFrom's key itself and delegates everything else.
// The real context answers a key as values does, save the context
// package's own (&cancelCtxKey, an *int: context.Cause, AfterFunc and
// children look up the cancelCtx by it): any other key is values' to
// answer, without making the real context (four allocations for a
// command handler that only reads a request-scoped value of its Ctx).
func (c *procContext) Value(key any) any {
	switch key.(type) {
	case pidKey:
		return c.pid
	case *int: // perhaps context's own key: the real context answers it
		return c.get().Value(key)
	}
	if c.ctx.values == nil {
		return nil // the real context's base is Background
	}
	return c.ctx.values.Value(key)
}

// withValuesOf is a context whose values are its own first, then those of
// values: a grace context (commandContext) keeps the process's parent's
// values. Deadline, Done, Err and cancellation are the embedded context's
// alone (its own cancelCtx answers context.Cause's lookup first).
type withValuesOf struct {
	context.Context
	values context.Context
}

func (c withValuesOf) Value(key any) any {
	if v := c.Context.Value(key); v != nil {
		return v
	}
	return c.values.Value(key)
}

// killWhenDone kills p, as Kill does, when parent is done, with reason's
// error for parent's cause (the cause itself if reason is nil). It
// returns the stop of that (nil for a parent that is never done), called
// when p ends. A parent done already kills p as soon as it runs.
func (s *Scheduler) killWhenDone(p *proc, parent context.Context, reason func(error) error) func() bool {
	if parent.Done() == nil {
		return nil
	}
	return context.AfterFunc(parent, func() { s.killForParent(p, parent, reason) })
}

// killForParent is killWhenDone's kill, parent being done.
func (s *Scheduler) killForParent(p *proc, parent context.Context, reason func(error) error) {
	err := context.Cause(parent)
	if reason != nil && reason(err) != nil {
		err = reason(err)
	}
	if p.state.Load()&stateMask != stateDone {
		s.cancel(p, err, false)
	}
}

// watchParent arranges for p's kill when SubmitOptions.Context (parent)
// is done. A homed process (Run) with the watchdog on registers nothing:
// its home watches parent while it waits (runHome) and the watchdog
// while one of its steps runs long (stepParentDone), at no cost per
// process. context.AfterFunc costs a process three allocations, two more
// for a parent new to it (its children map and Done channel), and two
// locks of the parent: 5 of the 37 allocations and 430 of the 3,700
// bytes of an embedder's request (luaproc's BenchmarkEmbedRequest/call).
// A step that spins finds its kill within two watchdog ticks (Slice),
// instead of at once. The homed case does not even ask for parent's Done
// channel here: a cancelCtx makes it on first use (112 bytes), and a run
// that never waits (its commands answered in their handlers) never needs
// it; the home asks only before it blocks (runHome).
func (s *Scheduler) watchParent(p *proc, parent context.Context, reason func(error) error) {
	if p.home != nil && s.watch.stop != nil {
		p.parentReason, p.parentHomed = reason, true
		return
	}
	if parent.Done() == nil {
		return // never done
	}
	p.stopParent = s.killWhenDone(p, parent, reason)
}

// parentDone kills p, homed (watchParent), if its parent context is done
// and no kill came yet; the home and the watchdog call it.
func (s *Scheduler) parentDone(p *proc) {
	if parent := p.ctx.values; parent.Err() != nil && !p.flag(pflagKilled) {
		s.killForParent(p, parent, p.parentReason)
	}
}
