package scheduler

import "sync/atomic"

// Stats is a snapshot of a scheduler's counters. Counters only grow;
// LiveProcesses is the number of processes not yet ended.
type Stats struct {
	Steps      uint64 // Step calls
	LocalPops  uint64 // processes a worker took from its own deque
	GlobalPops uint64 // processes taken from the global queue
	Steals     uint64 // successful StealHalfInto calls
	Stolen     uint64 // processes moved by them
	Parks      uint64 // times a worker went to sleep
	Wakeups    uint64 // times a sleeping worker was woken for work

	Submitted          uint64 // processes started
	Failed             uint64 // processes that ended with an error
	DroppedCompletions uint64 // completions that came late or twice
	DroppedMessages    uint64 // messages still queued when their process ended
	LiveProcesses      int64
}

// workerStats: written by the owning worker only (atomic so that Stats can
// read them from any goroutine).
type workerStats struct {
	steps, localPops, globalPops, steals, stolen atomic.Uint64
}

// schedStats: written by any goroutine.
type schedStats struct {
	parks, wakeups, submitted, failed, droppedMessages, droppedCompletions atomic.Uint64
}

// Stats returns the current counters.
func (s *Scheduler) Stats() Stats {
	st := Stats{
		Parks:              s.stats.parks.Load(),
		Wakeups:            s.stats.wakeups.Load(),
		Submitted:          s.stats.submitted.Load(),
		Failed:             s.stats.failed.Load(),
		DroppedCompletions: s.stats.droppedCompletions.Load(),
		DroppedMessages:    s.stats.droppedMessages.Load(),
		LiveProcesses:      s.live.Load(),
	}
	for _, w := range s.workers {
		st.Steps += w.stats.steps.Load()
		st.LocalPops += w.stats.localPops.Load()
		st.GlobalPops += w.stats.globalPops.Load()
		st.Steals += w.stats.steals.Load()
		st.Stolen += w.stats.stolen.Load()
	}
	return st
}
