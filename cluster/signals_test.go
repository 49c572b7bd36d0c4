package cluster

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luarun/luarun/scheduler"
)

// valued is an error carrying a value, as luaproc's ScriptError does.
type valued struct{ v any }

func (e valued) Error() string  { return "a table" }
func (e valued) ExitValue() any { return e.v }

// TestSignalWireForm: every signal kind and reason crosses as it left —
// the named reasons as themselves, other errors as a RemoteError with
// their text and value; a value that cannot cross leaves its text; every
// cut-short body is an error, never a panic.
func TestSignalWireForm(t *testing.T) {
	f := frame{from: scheduler.NodePID(1, 5), to: scheduler.NodePID(2, 9)}
	reasons := []error{nil, scheduler.ErrNoProcess, scheduler.ErrShutdown, scheduler.ErrNoConnection,
		errors.New("killed: enough"), valued{map[string]any{"code": int64(7)}}, valued{make(chan int)}}
	for kind := scheduler.SignalMonitor; kind <= scheduler.SignalKill; kind++ {
		for i, reason := range reasons {
			sig := scheduler.Signal{Kind: kind, From: f.from, To: f.to, Ref: uint64(i) << 40, Quiet: i%2 == 1, Reason: reason}
			body, err := appendSignal(nil, sig)
			require.NoError(t, err)
			got, err := readSignal(body, f)
			require.NoError(t, err)
			assert.Equal(t, sig.Kind, got.Kind)
			assert.Equal(t, sig.Ref, got.Ref)
			assert.Equal(t, sig.Quiet, got.Quiet)
			switch i {
			case 0, 1, 2, 3:
				assert.Equal(t, reason, got.Reason)
			case 4:
				assert.Equal(t, &RemoteError{Text: "killed: enough", Value: "killed: enough"}, got.Reason)
			case 5:
				assert.Equal(t, &RemoteError{Text: "a table", Value: map[string]any{"code": int64(7)}}, got.Reason)
			case 6:
				assert.Equal(t, &RemoteError{Text: "a table", Value: "a table"}, got.Reason)
			}
			for cut := range body {
				_, err := readSignal(body[:cut], f)
				assert.Error(t, err, "cut at %d of %d", cut, len(body))
			}
		}
	}
	_, err := readSignal([]byte{99, 0, 0, 0}, f)
	assert.Error(t, err, "an unknown kind")
	_, err = readSignal([]byte{1, 0, 0, 9}, f)
	assert.Error(t, err, "an unknown reason")
}
