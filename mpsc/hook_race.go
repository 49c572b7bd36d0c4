//go:build race

package mpsc

import (
	"math/rand/v2"
	"runtime"
)

// raceWindow widens the windows between a read and the CAS that depends on
// it, so that the stress tests hit the interleavings the package comment
// reasons about far more often. It exists only in -race builds.
func raceWindow() {
	if rand.Uint32()%4 == 0 {
		runtime.Gosched()
	}
}
