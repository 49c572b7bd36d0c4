package cluster

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"

	"github.com/luarun/luarun/payload"
	"github.com/luarun/luarun/scheduler"
)

// FuzzFrames: what another node publishes, read as deliver reads it
// (eachFrame, readFrame, readBody), gives frames or errors, never a
// panic; and whatever reads without an error writes back (appendBody) to
// a body that reads the same. Its seeds are testdata/fuzz/FuzzFrames
// (TestWriteFrameSeeds made them), run by go test as ordinary tests.
func FuzzFrames(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		eachFrame(data, func(fr []byte) {
			fh, body, ok := readFrame(fr)
			if !ok || fh.kind == kindTick {
				return
			}
			msg, sig, upTo, err := readBody(fh, body)
			if err != nil {
				return
			}
			var v any
			switch fh.kind {
			case kindReset, kindResetAck:
				v = reset{ack: fh.kind == kindResetAck, upTo: upTo}
			case kindSignal:
				v = sig
			default:
				v = msg
			}
			again, err := appendBody(nil, v)
			if err != nil {
				t.Fatalf("frame %+v body %q read as %#v, which does not write: %v", fh, body, v, err)
			}
			msg2, sig2, upTo2, err := readBody(fh, again)
			if err != nil || upTo2 != upTo || !sameSignal(sig, sig2) || !reflect.DeepEqual(canonical(msg), canonical(msg2)) {
				t.Fatalf("frame %+v body %q read as %#v, wrote %q, read back %#v %#v (%v)", fh, body, v, again, msg2, sig2, err)
			}
		})
	})
}

// sameSignal compares signals, reasons by text and value.
func sameSignal(a, b scheduler.Signal) bool {
	ra, rb := a.Reason, b.Reason
	a.Reason, b.Reason = nil, nil
	if a != b || (ra == nil) != (rb == nil) {
		return false
	}
	var ea, eb *RemoteError
	if errors.As(ra, &ea) && errors.As(rb, &eb) {
		return ea.Text == eb.Text && reflect.DeepEqual(canonical(ea.Value), canonical(eb.Value))
	}
	return ra == rb
}

// floatBits stands for a float64 in canonical: NaN equals NaN there.
type floatBits uint64

// canonical is v with floats as their bits, for reflect.DeepEqual.
func canonical(v any) any {
	switch x := v.(type) {
	case float64:
		if math.IsNaN(x) {
			return floatBits(0x7ff8000000000001)
		}
		return floatBits(math.Float64bits(x))
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = canonical(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = canonical(e)
		}
		return out
	case map[any]any:
		out := make(map[any]any, len(x))
		for k, e := range x {
			out[canonical(k)] = canonical(e)
		}
		return out
	case scheduler.RemoteCall:
		x.Value = canonical(x.Value)
		return x
	}
	return v
}

// TestWriteFrameSeeds writes FuzzFrames' seed corpus when
// LUARUN_WRITE_SEEDS is set: a frame of each kind, batches of several,
// and damaged ones.
func TestWriteFrameSeeds(t *testing.T) {
	if os.Getenv("LUARUN_WRITE_SEEDS") == "" {
		t.Skip("set LUARUN_WRITE_SEEDS=1 to rewrite testdata/fuzz/FuzzFrames")
	}
	one := func(f frame, v any) []byte {
		b := appendFrame(make([]byte, lengthBytes), f)
		if f.kind != kindTick {
			var err error
			if b, err = appendBody(b, v); err != nil {
				t.Fatal(err)
			}
		}
		binary.BigEndian.PutUint32(b, uint32(len(b)-lengthBytes))
		return b
	}
	msg := frame{source: 2, seq: 7, kind: kindMessage, from: 1<<40 | 5, to: 9}
	frames := [][]byte{
		one(msg, map[string]any{"a": []any{int64(1), 2.5, "x", payload.Null, true}}),
		one(msg, map[any]any{int64(1): []byte("b"), false: math.NaN()}),
		one(frame{source: 1, seq: 1, kind: kindCall, from: 3, to: 4}, scheduler.RemoteCall{ID: 9, Value: "ping"}),
		one(frame{source: 1, seq: 2, kind: kindReply, from: 4, to: 3}, scheduler.RemoteCall{ID: 9, Reply: true, Value: []any{}}),
		one(frame{source: 1, seq: 3, kind: kindSignal, from: 3, to: 4}, scheduler.Signal{Kind: scheduler.SignalMonitor, From: 3, To: 4, Ref: 11, Quiet: true}),
		one(frame{source: 1, seq: 4, kind: kindSignal, from: 3, to: 4}, scheduler.Signal{Kind: scheduler.SignalDown, From: 3, To: 4, Ref: 11, Reason: scheduler.ErrNoProcess}),
		one(frame{source: 1, seq: 5, kind: kindSignal, from: 3, to: 4}, scheduler.Signal{Kind: scheduler.SignalKill, From: 3, To: 4, Reason: &RemoteError{Text: "boom", Value: map[string]any{"code": int64(7)}}}),
		one(frame{source: 1, seq: 6, kind: kindReset}, reset{upTo: 5}),
		one(frame{source: 1, seq: 7, kind: kindResetAck}, reset{ack: true, upTo: 5}),
		one(frame{source: 1, seq: 8, kind: kindTick}, nil),
	}
	var batch []byte
	for _, fr := range frames {
		batch = append(batch, fr...)
	}
	seeds := append(frames, batch, batch[:len(batch)/2], []byte{0, 0, 0, 1}, []byte{0xff, 0xff, 0xff, 0xff, 1},
		append([]byte{0, 0, 0, 6}, 1, 1, byte(kindSignal), 1, 1, 6), append([]byte{0, 0, 0, 9}, 1, 1, byte(kindSignal), 1, 1, 1, 0, 0, 9))
	dir := filepath.Join("testdata", "fuzz", "FuzzFrames")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for i, s := range seeds {
		body := fmt.Sprintf("go test fuzz v1\n[]byte(%s)\n", strconv.Quote(string(s)))
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("seed%02d", i)), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
