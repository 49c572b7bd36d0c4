package commands

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/luarun/luarun/payload"
	"github.com/luarun/luarun/scheduler"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// caller is a Go process that makes one command call and ends with what
// the call returned (its data, or its error).
type caller struct {
	cmd  string
	args []any
	sent bool
}

func (c *caller) Init(context.Context, string, payload.Payloads) error { return nil }
func (c *caller) Close()                                               {}
func (c *caller) Step(events []scheduler.Event, out *scheduler.StepOutput) error {
	if !c.sent {
		c.sent = true
		out.Yield(1, c.cmd, c.args...)
		return nil
	}
	for _, ev := range events {
		switch ev.Type {
		case scheduler.EventYieldComplete:
			out.Status = scheduler.StatusDone
			if ev.Error != nil {
				return ev.Error
			}
			out.Result = payload.Payloads{ev.Data}
			return nil
		case scheduler.EventCancel:
			out.Status = scheduler.StatusDone
			return ev.Error
		}
	}
	return nil
}

// newSched makes a scheduler with the built-in and the I/O commands; at
// cleanup it shuts down, then the IO closes (see newSchedIO).
func newSched(t *testing.T) *scheduler.Scheduler {
	s, _ := newSchedIO(t)
	return s
}

// newSchedIO is newSched, also giving the IO (whose maxData a test may
// lower before its first call).
func newSchedIO(t *testing.T) (*scheduler.Scheduler, *IO) {
	reg := new(scheduler.Registry)
	Register(reg)
	io := NewIO()
	io.Register(reg)
	t.Cleanup(func() { require.NoError(t, io.Close(context.Background())) })
	s := scheduler.New(scheduler.Options{Workers: 2, Dispatcher: reg})
	t.Cleanup(func() { shutdown(t, s) })
	return s, io
}

func shutdown(t *testing.T, s *scheduler.Scheduler) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	require.NoError(t, s.Shutdown(ctx))
}

func call(t *testing.T, s *scheduler.Scheduler, cmd string, args ...any) (scheduler.Handle, time.Duration) {
	t0 := time.Now()
	h, err := s.Submit(&caller{cmd: cmd, args: args}, "", nil)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	h.Wait(ctx)
	return h, time.Since(t0)
}

// result is what the call of the caller process h returned: its data, or
// its error.
func result(h scheduler.Handle) (any, error) {
	res, err := h.Result()
	if err != nil {
		return nil, err
	}
	return res[0], nil
}

func TestSleep(t *testing.T) {
	s := newSched(t)
	h, took := call(t, s, "time.sleep", 0.05)
	_, err := h.Result()
	require.NoError(t, err)
	assert.GreaterOrEqual(t, took, 50*time.Millisecond)
	_, took = call(t, s, "time.sleep", int64(0))
	assert.Less(t, took, time.Second)
	h, _ = call(t, s, "time.sleep", "soon")
	_, err = h.Result()
	assert.EqualError(t, err, "time.sleep: argument 1: seconds expected, got string")
}

func TestWait(t *testing.T) {
	s := newSched(t)
	// a target that ends after a sleep with a result
	target, err := s.Submit(&caller{cmd: "time.sleep", args: []any{0.05}}, "", nil)
	require.NoError(t, err)
	h, _ := call(t, s, "process.wait", target)
	res, err := h.Result()
	require.NoError(t, err)
	assert.Equal(t, payload.Payloads{payload.Payloads{true, nil}}, res)

	// already ended: answered at once
	h, _ = call(t, s, "process.wait", target, 1.0)
	res, _ = h.Result()
	assert.Equal(t, payload.Payloads{payload.Payloads{true, nil}}, res)

	// a failed target
	failed, err := s.Submit(&caller{cmd: "no.such"}, "", nil)
	require.NoError(t, err)
	h, _ = call(t, s, "process.wait", failed)
	res, _ = h.Result()
	got := res[0].(payload.Payloads)
	assert.Equal(t, false, got[0])
	assert.Contains(t, got[1], "unknown command")

	// a timeout
	long, err := s.Submit(&caller{cmd: "time.sleep", args: []any{10.0}}, "", nil)
	require.NoError(t, err)
	h, took := call(t, s, "process.wait", long, 0.05)
	res, _ = h.Result()
	assert.Equal(t, payload.Payloads{payload.Payloads{nil, "timeout"}}, res)
	assert.Less(t, took, 5*time.Second)
	require.NoError(t, s.Kill(long.PID(), errors.New("done")))

	// bad arguments
	h, _ = call(t, s, "process.wait", "pid")
	_, err = h.Result()
	assert.EqualError(t, err, "process.wait: argument 1: process handle expected, got string")
}

// TestWaitLeavesWithKilledWaiter: the goroutine of a wait whose process
// is killed leaves (goleak checks at exit).
func TestWaitLeavesWithKilledWaiter(t *testing.T) {
	s := newSched(t)
	long, err := s.Submit(&caller{cmd: "time.sleep", args: []any{10.0}}, "", nil)
	require.NoError(t, err)
	waiter, err := s.Submit(&caller{cmd: "process.wait", args: []any{long}}, "", nil)
	require.NoError(t, err)
	time.Sleep(20 * time.Millisecond)
	require.NoError(t, s.Kill(waiter.PID(), errors.New("stop waiting")))
	_, err = waiter.Wait(context.Background())
	assert.EqualError(t, err, "stop waiting")
	require.NoError(t, s.Kill(long.PID(), nil))
	long.Wait(context.Background())
}

// TestSleepForever: a sleep too long for a Duration (math.huge, 1e10 s)
// lasts until the process is killed, holding no timer.
func TestSleepForever(t *testing.T) {
	s := newSched(t)
	for _, d := range []any{math.Inf(1), 1e10, int64(math.MaxInt64)} {
		h, err := s.Submit(&caller{cmd: "time.sleep", args: []any{d}}, "", nil)
		require.NoError(t, err)
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		_, err = h.Wait(ctx)
		cancel()
		require.ErrorIs(t, err, context.DeadlineExceeded, "time.sleep(%v) returned", d)
		require.NoError(t, s.Kill(h.PID(), errors.New("stop")))
		_, err = h.Wait(context.Background())
		assert.EqualError(t, err, "stop")
	}
}

func TestSleepOdd(t *testing.T) {
	s := newSched(t)
	h, took := call(t, s, "time.sleep", 1e-12) // 1 ns, not 0
	_, err := h.Result()
	require.NoError(t, err)
	assert.Less(t, took, time.Second)
	h, _ = call(t, s, "time.sleep", math.NaN())
	_, err = h.Result()
	assert.EqualError(t, err, "time.sleep: argument 1: seconds expected, got nan")
	h, _ = call(t, s, "time.sleep", map[string]any{})
	_, err = h.Result()
	assert.EqualError(t, err, "time.sleep: argument 1: seconds expected, got table")

	// process.wait with a timeout too large for a timer waits
	target, err := s.Submit(&caller{cmd: "time.sleep", args: []any{0.05}}, "", nil)
	require.NoError(t, err)
	h, _ = call(t, s, "process.wait", target, math.Inf(1))
	res, err := h.Result()
	require.NoError(t, err)
	assert.Equal(t, payload.Payloads{payload.Payloads{true, nil}}, res)
}

func TestToDuration(t *testing.T) {
	const most = math.MaxInt64 / int64(time.Second)
	for _, tc := range []struct {
		in   any
		want time.Duration
	}{
		{int64(2), 2 * time.Second},
		{0.25, 250 * time.Millisecond},
		{1e-12, 1},
		{0.0, 0},
		{-1.5, -1500 * time.Millisecond},
		{int64(most), time.Duration(most) * time.Second},
		{int64(most + 1), forever},
		{int64(math.MaxInt64), forever},
		{float64(most) + 1, forever},
		{1e10, forever},
		{math.Inf(1), forever},
		{math.Inf(-1), math.MinInt64},
		{int64(math.MinInt64), math.MinInt64},
		{-1e300, math.MinInt64},
	} {
		got, err := toDuration(tc.in)
		require.NoError(t, err, "%v", tc.in)
		assert.Equal(t, tc.want, got, "%v", tc.in)
	}
	_, err := toDuration(math.NaN())
	assert.EqualError(t, err, "seconds expected, got nan")
	_, err = toDuration(true)
	assert.EqualError(t, err, "seconds expected, got boolean")
}

func TestLuaType(t *testing.T) {
	for _, tc := range []struct {
		v    any
		want string
	}{
		{nil, "nil"}, {true, "boolean"}, {int64(1), "number"}, {1.5, "number"},
		{"s", "string"}, {[]byte("b"), "string"}, {[]any{}, "table"},
		{map[string]any{}, "table"}, {map[any]any{}, "table"}, {struct{}{}, "userdata"},
	} {
		assert.Equal(t, tc.want, luaType(tc.v), "%#v", tc.v)
	}
	for _, tc := range []struct {
		v    any
		want string
	}{
		{int64(-7), "-7"}, {3.0, "3"}, {1.5, "1.5"}, {1e15, "1e+15"}, {0.1, "0.1"},
		{math.Inf(1), "inf"}, {math.Inf(-1), "-inf"}, {math.NaN(), "nan"},
	} {
		got, ok := scalarString(tc.v)
		assert.True(t, ok)
		assert.Equal(t, tc.want, got, "%#v", tc.v)
	}
}
