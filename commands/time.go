package commands

// time.sleep, and the seconds that every command taking a duration reads
// (time.sleep, process.wait's timeout, opts.timeout of http and exec). A
// number of seconds becomes a time.Duration without overflowing: one too
// large for a Duration (about 292 years, math.huge included) is forever,
// which means no timer and no deadline at all; a positive one too small
// for a nanosecond is one nanosecond, not zero; NaN is an error.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/luarun/luarun/scheduler"
)

// forever is the duration of a number of seconds too large for a
// time.Duration: no timer, no deadline.
const forever = time.Duration(math.MaxInt64)

// Sleep completes its call after Args[0] seconds (a number). It uses
// time.AfterFunc: a sleeping process holds a runtime timer (about 100
// bytes in the Go runtime's timer heap), not a goroutine; a goroutine
// exists only for the moment the timer fires. A process killed while it
// sleeps leaves its timer to fire; the completion is then dropped. A
// sleep forever holds no timer: the call fails when the process ends.
func Sleep(c scheduler.Call) error {
	d, err := seconds(c.Args, 0)
	if err != nil {
		return err // the registry prefixes "time.sleep: "
	}
	switch {
	case d <= 0:
		c.Complete(nil)
	case d == forever:
		context.AfterFunc(c.Ctx, func() { c.Fail(context.Cause(c.Ctx)) })
	default:
		time.AfterFunc(d, func() { c.Complete(nil) })
	}
	return nil
}

// seconds reads Args[i] as a duration in seconds (see toDuration); a
// missing or nil argument is -1 (no duration).
func seconds(args []any, i int) (time.Duration, error) {
	if i >= len(args) || args[i] == nil {
		return -1, nil
	}
	d, err := toDuration(args[i])
	if err != nil {
		return 0, fmt.Errorf("argument %d: %w", i+1, err)
	}
	return d, nil
}

// toDuration converts a number of seconds to a Duration: forever from
// math.MaxInt64 nanoseconds up (+Inf included), at least 1 ns if
// positive, and no less than math.MinInt64 ns if negative.
func toDuration(v any) (time.Duration, error) {
	switch x := v.(type) {
	case int64:
		const most = math.MaxInt64 / int64(time.Second)
		switch {
		case x > most:
			return forever, nil
		case x < -most:
			return math.MinInt64, nil
		}
		return time.Duration(x) * time.Second, nil
	case float64:
		return floatDuration(x)
	}
	return 0, fmt.Errorf("seconds expected, got %s", luaType(v))
}

// floatDuration is toDuration for a float.
func floatDuration(x float64) (time.Duration, error) {
	ns := x * float64(time.Second)
	switch {
	case math.IsNaN(ns):
		return 0, errors.New("seconds expected, got nan")
	case ns >= math.MaxInt64: // 2⁶³ as a float: past the largest Duration
		return forever, nil
	case ns <= math.MinInt64:
		return math.MinInt64, nil
	case ns > 0 && ns < 1:
		return 1, nil
	}
	return time.Duration(ns), nil
}
