package scheduler

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBacklogTakenInBatches: a process that fell behind takes its queued
// messages at most maxDrain a step, every one, in order, and is run
// again for the rest without a new wakeup.
func TestBacklogTakenInBatches(t *testing.T) {
	const n = 3*maxDrain + 5
	s := newSched(t, 2, nil)
	release := make(chan struct{})
	var batches []int
	var got []int
	p := &fnProc{step: func(evs []Event, out *StepOutput) error {
		if batches == nil { // the first step: hold the worker while the backlog grows
			batches = []int{}
			<-release
		}
		batches = append(batches, len(evs))
		for _, ev := range evs {
			if ev.Type == EventMessage {
				got = append(got, ev.Data.(int))
			}
		}
		out.Status = StatusReceive
		if len(got) == n {
			out.Status = StatusDone
		}
		return nil
	}}
	h, err := s.Submit(p, "main", nil)
	require.NoError(t, err)
	for i := range n {
		require.NoError(t, s.Send(0, h.PID(), i))
	}
	close(release)
	wait(t, h)
	require.Len(t, got, n)
	for i, v := range got {
		require.Equal(t, i, v, "message %d", i)
	}
	for _, b := range batches {
		assert.LessOrEqual(t, b, maxDrain)
	}
	assert.Contains(t, batches, maxDrain, "the backlog came in full batches: %v", batches)
}
