package scheduler

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestEndNoticesTogether: when a process ends, every watcher's down and
// every linked process's exit is in place before any of them can be read. A watcher that tells a linked process about the end (a message
// sent on hearing the down) is heard after the exit, and the other way
// round — as the supervisor example relies on: the job queue hears of a
// crash through its monitor, and whoever it tells afterwards asks the
// supervisor, which must already hold the exit. Each of the rounds ends
// one process watched and linked by two others on a four-worker scheduler;
// the two relay what they hear to each other.
func TestEndNoticesTogether(t *testing.T) {
	s := newSched(t, 4, nil)
	rounds := 3000
	if testing.Short() {
		rounds = 300
	}
	for round := range rounds {
		// watcher relays its down to linked; linked relays its exit to
		// watcher. Each records the order in which it heard the two.
		var watcherPID, linkedPID PID
		heard := make(chan []string, 2)
		hw, err := s.Submit(newRelay(heard, &linkedPID, EventDown), "", nil)
		require.NoError(t, err)
		hl, err := s.Submit(newRelay(heard, &watcherPID, EventExit), "", nil)
		require.NoError(t, err)
		watcherPID, linkedPID = hw.PID(), hl.PID()
		ender := newEnder()
		he, _, err := s.SubmitWith(ender, "", nil, SubmitOptions{Monitor: watcherPID})
		require.NoError(t, err)
		require.NoError(t, s.Link(linkedPID, he.PID()))
		require.NoError(t, s.Send(0, he.PID(), "end"))
		for range 2 {
			got := <-heard
			require.Equal(t, []string{"notice", "told"}, got, "round %d: a relayed notice overtook the end's own", round)
		}
	}
}

// newEnder returns a process that waits until it is sent "end", then
// fails with "ended": the process whose end the tests watch.
func newEnder() *fnProc {
	return &fnProc{step: func(evs []Event, out *StepOutput) error {
		for _, ev := range evs {
			if ev.Type == EventMessage && ev.Data == "end" {
				return errors.New("ended")
			}
		}
		out.Status = StatusReceive
		return nil
	}}
}

// newRelay returns a process that waits for a notice of kind mine and a
// message "told", in either order, then sends the order it heard them
// in to heard and ends. On its notice it sends "told" to *to (read
// then), unless to is nil.
func newRelay(heard chan<- []string, to *PID, mine EventType) *fnProc {
	var got []string
	return &fnProc{step: func(evs []Event, out *StepOutput) error {
		for _, ev := range evs {
			switch {
			case ev.Type == mine:
				got = append(got, "notice")
				if to == nil {
					continue
				}
				if err := out.Send(*to, "told"); err != nil {
					return err
				}
			case ev.Type == EventMessage && ev.Data == "told":
				got = append(got, "told")
			}
		}
		if len(got) == 2 {
			heard <- got
			out.Status = StatusDone
			return nil
		}
		out.Status = StatusReceive
		return nil
	}}
}
