package scheduler

import "sync/atomic"

// Stats is a snapshot of a scheduler's counters. Counters only grow;
// LiveProcesses is the number of processes not yet ended.
//
// Every submitted process ends exactly one way, so once none is live:
//
//	Submitted = Completed + Failed + Killed + Cancelled + Abandoned
//
// and, at any time, Submitted = that sum + LiveProcesses (read at once:
// Stats is not a snapshot across counters, so a process ending while
// Stats runs may show in one and not the other).
//
// Steps and HandOffs are published by each worker when it idles, when a
// process ends on it and every few dozen steps: while a worker runs they
// may lag by that much; once it idles they are exact.
type Stats struct {
	Steps uint64 // Step calls
	// LocalPops: processes a worker took from its own deque or runnext
	// (one a step handed a message to runs next without either: HandOffs).
	LocalPops  uint64
	GlobalPops uint64 // processes taken from the global queue
	Steals     uint64 // successful StealHalfInto calls
	Stolen     uint64 // processes moved by them
	Parks      uint64 // times a worker went to sleep
	Wakeups    uint64 // times a sleeping worker was woken for work
	Helpers    uint64 // extra workers the watchdog started (watchdog.go)
	// Inline: processes whose first steps ran on the goroutine that
	// submitted them (SubmitOptions.Inline, inline.go).
	Inline uint64
	// HandOffs: messages sent from a step straight to a process waiting
	// for messages, which then ran next on the sender's worker, without
	// its event queue (handoff.go).
	HandOffs uint64

	Submitted uint64 // processes started (a Submit that failed is not)
	Completed uint64 // processes that ended without an error
	Failed    uint64 // processes that ended with an error of their own
	Killed    uint64 // processes that ended by Kill (with its reason)
	Cancelled uint64 // processes that ended by Shutdown's cancel
	Abandoned uint64 // processes still running at Shutdown's deadline

	// SlowSteps counts processes reported for a step longer than
	// Options.SlowStep; StepLimited those killed by Options.MaxStep (they
	// count in Killed too).
	SlowSteps, StepLimited uint64

	DroppedCompletions uint64 // completions that came late or twice
	// DroppedMessages: messages accepted by Send that their process never
	// took: still queued when it ended, or held unread in the process
	// (StepOutput.Backlog).
	DroppedMessages uint64
	// RefusedMessages: sends refused because the mailbox was full
	// (Options.MaxMailbox); RefusedProcesses: submits refused at
	// Options.MaxProcs.
	RefusedMessages, RefusedProcesses uint64
	// Forwarded: messages to processes on other nodes that the Relay
	// took (relay.go); they are counted again, as any message, by the
	// node that delivers them.
	Forwarded     uint64
	LiveProcesses int64
}

// workerStats: written by the owning worker only (atomic so that Stats can
// read them from any goroutine). steps and handOffs, counted on every
// message of a ping-pong, are plain: an atomic add is a LOCK-prefixed
// instruction (about 4 ns here, with the stores of a step pending); the
// owner publishes them (publishCounts) when it goes idle, when a process
// ends on it, and every publishEvery steps, so Stats sees them late by
// at most that while the worker runs, and exactly once it idles.
type workerStats struct {
	localPops, globalPops, steals, stolen atomic.Uint64
	steps, handOffs                       uint64        // the owner's
	publishedSteps, publishedHandOffs     atomic.Uint64 // what Stats reads
}

// publishCounts makes the owner's step and hand-off counts Stats's.
func (w *worker) publishCounts() {
	w.stats.publishedSteps.Store(w.stats.steps)
	w.stats.publishedHandOffs.Store(w.stats.handOffs)
}

// schedStats: written by any goroutine.
type schedStats struct {
	parks, wakeups, helpers, inline                            atomic.Uint64
	submitted, completed, failed, killed, cancelled, abandoned atomic.Uint64
	slowSteps, stepLimited                                     atomic.Uint64
	droppedMessages, droppedCompletions                        atomic.Uint64
	refusedMessages, refusedProcesses                          atomic.Uint64
	forwarded                                                  atomic.Uint64
}

// Stats returns the current counters.
func (s *Scheduler) Stats() Stats {
	st := Stats{
		Parks:              s.stats.parks.Load(),
		Wakeups:            s.stats.wakeups.Load(),
		Helpers:            s.stats.helpers.Load(),
		Inline:             s.stats.inline.Load(),
		Submitted:          s.stats.submitted.Load(),
		Completed:          s.stats.completed.Load(),
		Failed:             s.stats.failed.Load(),
		Killed:             s.stats.killed.Load(),
		Cancelled:          s.stats.cancelled.Load(),
		Abandoned:          s.stats.abandoned.Load(),
		SlowSteps:          s.stats.slowSteps.Load(),
		StepLimited:        s.stats.stepLimited.Load(),
		DroppedCompletions: s.stats.droppedCompletions.Load(),
		DroppedMessages:    s.stats.droppedMessages.Load(),
		RefusedMessages:    s.stats.refusedMessages.Load(),
		Forwarded:          s.stats.forwarded.Load(),
		RefusedProcesses:   s.stats.refusedProcesses.Load(),
		LiveProcesses:      s.live.Load(),
	}
	for _, w := range s.allWorkers() {
		st.Steps += w.stats.publishedSteps.Load()
		st.LocalPops += w.stats.localPops.Load()
		st.GlobalPops += w.stats.globalPops.Load()
		st.Steals += w.stats.steals.Load()
		st.Stolen += w.stats.stolen.Load()
		st.HandOffs += w.stats.publishedHandOffs.Load()
	}
	return st
}
