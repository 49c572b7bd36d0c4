package commands

import (
	"fmt"
	"time"

	"github.com/luarun/luarun/scheduler"
)

// Sleep completes its call after Args[0] seconds (a number). It uses
// time.AfterFunc: a sleeping process holds a runtime timer (about 100
// bytes in the Go runtime's timer heap), not a goroutine; a goroutine
// exists only for the moment the timer fires. A process killed while it
// sleeps leaves its timer to fire; the completion is then dropped.
func Sleep(c scheduler.Call) error {
	d, err := seconds(c.Args, 0)
	if err != nil {
		return err // the registry prefixes "time.sleep: "
	}
	if d <= 0 {
		c.Complete(nil)
		return nil
	}
	time.AfterFunc(d, func() { c.Complete(nil) })
	return nil
}

// seconds reads Args[i] as a duration in seconds; a missing or nil
// argument is -1 (no duration).
func seconds(args []any, i int) (time.Duration, error) {
	if i >= len(args) || args[i] == nil {
		return -1, nil
	}
	switch x := args[i].(type) {
	case float64:
		return time.Duration(x * float64(time.Second)), nil
	case int64:
		return time.Duration(x) * time.Second, nil
	default:
		return 0, fmt.Errorf("argument %d: seconds expected, got %T", i+1, args[i])
	}
}
