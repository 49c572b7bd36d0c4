package gcpace

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestGCPercentFor(t *testing.T) {
	assert.Equal(t, 800, gcPercentFor(0, 32<<20), "a small heap: 4 MB grows by the floor")
	assert.Equal(t, 800, gcPercentFor(1<<20, 32<<20))
	assert.Equal(t, 200, gcPercentFor(16<<20, 32<<20))
	assert.Equal(t, 100, gcPercentFor(32<<20, 32<<20))
	assert.Equal(t, 100, gcPercentFor(10<<30, 32<<20), "a big heap: Go's own pace")
}

// TestNextGCPercent: a heap that grew by over half of what the last
// percentage allowed, and kept it live, gets growingPercent; one whose
// growth was collected, or that shrank, gets the floor's percentage.
func TestNextGCPercent(t *testing.T) {
	const mb = 1 << 20
	assert.Equal(t, 200, nextGCPercent(1024*mb, 1600*mb, 100, 32*mb), "600 of 1024 MB allowed stayed live")
	assert.Equal(t, 200, nextGCPercent(1024*mb, 3000*mb, 200, 32*mb), "1976 of 2048 MB stayed live")
	assert.Equal(t, 100, nextGCPercent(1024*mb, 1400*mb, 100, 32*mb), "376 of 1024 MB stayed live: garbage")
	assert.Equal(t, 100, nextGCPercent(3000*mb, 3100*mb, 200, 32*mb), "the growth stopped: Go's pace again")
	assert.Equal(t, 100, nextGCPercent(3000*mb, 1000*mb, 200, 32*mb), "it shrank")
	assert.Equal(t, 800, nextGCPercent(0, 2*mb, 800, 32*mb), "a small heap keeps the floor's")
	assert.Equal(t, 200, nextGCPercent(4*mb, 40*mb, 800, 32*mb), "36 of 32 MB allowed stayed live")
}

// gogc is the collector's current percentage.
func gogc() uint64 {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// TestStartFollowsTheLiveHeap: after collections, the percentage
// follows the live heap: Go's 100 % with 256 MB live, the floor's again
// once it is gone. It waits for the finalizer by collecting until the
// percentage changes (no deadline but the test's).
func TestStartFollowsTheLiveHeap(t *testing.T) {
	t.Setenv("GOGC", "")
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	stop := Start()
	defer stop()
	assert.EqualValues(t, gcPercentFor(0, heapFloor), gogc())
	big := make([]byte, 256<<20)
	for gogc() != 100 {
		runtime.GC()
		runtime.Gosched()
	}
	runtime.KeepAlive(big)
	for gogc() == 100 {
		runtime.GC()
		runtime.Gosched()
	}
	assert.Greater(t, gogc(), uint64(100))
}

// TestStartLeavesGOGC: a GOGC the user set is left alone.
func TestStartLeavesGOGC(t *testing.T) {
	t.Setenv("GOGC", "150")
	defer debug.SetGCPercent(debug.SetGCPercent(150))
	Start()()
	assert.EqualValues(t, 150, gogc())
}

// TestStopRestores: stop puts back the percentage in force before Start.
func TestStopRestores(t *testing.T) {
	t.Setenv("GOGC", "")
	defer debug.SetGCPercent(debug.SetGCPercent(130))
	stop := Start()
	assert.EqualValues(t, gcPercentFor(0, heapFloor), gogc())
	stop()
	assert.EqualValues(t, 130, gogc())
}
