package cluster

// Signals between nodes: links', monitors' and kills' (scheduler/remote.go).
//
// A signal's body is its kind and reference (uvarints), whether the
// monitor is quiet (a byte), and its reason:
//
//	0  normal (nil)          2  shutdown
//	1  noproc                3  noconnection
//	4  an error: the value it carries (ExitValue, else its text) and its
//	   text, both in payload's wire form
//
// An error of the fourth kind arrives as a *RemoteError, which has the
// same text and value: a script sees the reason it would have seen on
// the node where the process ended.

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/luarun/luarun/payload"
	"github.com/luarun/luarun/scheduler"
)

// The reasons a signal carries by name.
var namedReasons = []error{nil, scheduler.ErrNoProcess, scheduler.ErrShutdown, scheduler.ErrNoConnection}

const reasonError = 4

// exitValuer is an error that carries the value its process ended with
// (luaproc's ScriptError: error({code = 7})).
type exitValuer interface{ ExitValue() any }

// RemoteError is a reason that came from another node.
type RemoteError struct {
	Text  string
	Value any // the value the process ended with (a payload value), or Text
}

func (e *RemoteError) Error() string { return e.Text }

// ExitValue is the value the process ended with.
func (e *RemoteError) ExitValue() any { return e.Value }

func appendSignal(buf []byte, sig scheduler.Signal) ([]byte, error) {
	buf = binary.AppendUvarint(buf, uint64(sig.Kind))
	buf = binary.AppendUvarint(buf, sig.Ref)
	quiet := byte(0)
	if sig.Quiet {
		quiet = 1
	}
	buf = append(buf, quiet)
	for i, named := range namedReasons {
		if sig.Reason == named || (named != nil && errors.Is(sig.Reason, named)) {
			return append(buf, byte(i)), nil
		}
	}
	text := sig.Reason.Error()
	var value any = text
	var ev exitValuer
	if errors.As(sig.Reason, &ev) && ev.ExitValue() != nil {
		value = ev.ExitValue()
	}
	buf = append(buf, reasonError)
	out, err := payload.AppendWire(buf, value)
	if err != nil { // a value that cannot cross: its text does
		out, err = payload.AppendWire(buf, text)
	}
	if err != nil {
		return nil, err
	}
	return payload.AppendWire(out, text)
}

// readSignal reads a signal's body; f is its frame.
func readSignal(body []byte, f frame) (scheduler.Signal, error) {
	sig := scheduler.Signal{From: f.from, To: f.to}
	kind, k := binary.Uvarint(body)
	if k <= 0 || kind < uint64(scheduler.SignalMonitor) || kind > uint64(scheduler.SignalKill) {
		return sig, errors.New("not a signal")
	}
	sig.Kind, body = scheduler.SignalKind(kind), body[k:]
	if sig.Ref, k = binary.Uvarint(body); k <= 0 || len(body) < k+2 {
		return sig, errors.New("a signal cut short")
	}
	sig.Quiet, body = body[k] == 1, body[k+1:]
	tag := body[0]
	body = body[1:]
	switch {
	case int(tag) < len(namedReasons):
		sig.Reason = namedReasons[tag]
		if len(body) > 0 {
			return sig, errors.New("bytes after a signal")
		}
	case tag == reasonError:
		value, rest, err := payload.UnmarshalWire(body)
		if err != nil {
			return sig, err
		}
		text, err := readValue(rest)
		s, ok := text.(string)
		if err != nil || !ok {
			return sig, fmt.Errorf("a signal's reason has no text: %v", err)
		}
		sig.Reason = &RemoteError{Text: s, Value: value}
	default:
		return sig, fmt.Errorf("a signal's reason of kind %d", tag)
	}
	return sig, nil
}
