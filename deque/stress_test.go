package deque

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
)

// -soak multiplies the stress tests' item counts (go test ./deque -soak 20).
var soak = flag.Int("soak", 1, "multiply the stress tests' item counts")

// TestConservation is the proof that StealHalfInto is safe against the
// owner (DESIGN.md section 9): uniquely numbered items, an owner that pushes
// and pops in bursts deep enough to reach into the thieves' range, thieves
// that mix Steal and StealHalfInto (from the owner and from each other), a
// ring that starts at 2 slots so it grows constantly, and an exact count of
// how often each item came out. Run it with -race (which also turns on the
// yield points of hook_race.go) and with -cpu 1,2,4,8.
func TestConservation(t *testing.T) {
	for _, thieves := range []int{2, 4, 8} {
		items := 1 << 20
		if raceEnabled {
			// The race detector and the yield points slow each operation
			// ~50x; with 8 thieves on 2 cores the owner is starved.
			items = 1 << 17 / thieves
		}
		items *= *soak
		t.Run(fmt.Sprintf("thieves=%d", thieves), func(t *testing.T) {
			runConservation(t, items, thieves)
		})
	}
}

func runConservation(t *testing.T, items, thieves int) {
	seen := make([]atomic.Uint32, items)
	vals := make([]int, items)
	for i := range vals {
		vals[i] = i
	}
	var cleared atomic.Int64 // slots taken after they were cleared: a duplicate
	take := func(p *int) {
		if p == nil {
			cleared.Add(1)
			return
		}
		seen[*p].Add(1)
	}

	owner := New[*int](2)
	decks := make([]*Deque[*int], thieves)
	for i := range decks {
		decks[i] = New[*int](2)
	}
	var done atomic.Bool
	var stats [4]atomic.Int64 // owner pops, single steals, batch steals, items in batches
	var wg sync.WaitGroup

	for w := range thieves {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mine := decks[w]
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			for {
				finished := done.Load()
				switch r := rng.IntN(8); {
				case r < 3:
					if p, ok := owner.Steal(); ok {
						take(p)
						stats[1].Add(1)
					}
				case r < 6:
					if n := owner.StealHalfInto(mine); n > 0 {
						stats[2].Add(1)
						stats[3].Add(int64(n))
					}
				default:
					if v := decks[rng.IntN(thieves)]; v != mine {
						v.StealHalfInto(mine)
					}
				}
				for k := rng.IntN(4); k >= 0; k-- {
					if p, ok := mine.PopBottom(); ok {
						take(p)
					}
				}
				if finished && mine.Len() == 0 {
					return
				}
			}
		}()
	}

	rng := rand.New(rand.NewPCG(99, 1))
	for next := 0; next < items; {
		burst := min(1+rng.IntN(64), items-next)
		for range burst {
			owner.PushBottom(&vals[next])
			next++
		}
		for k := rng.IntN(burst + 8); k > 0; k-- {
			p, ok := owner.PopBottom()
			if !ok {
				break
			}
			take(p)
			stats[0].Add(1)
		}
	}
	for {
		p, ok := owner.PopBottom()
		if !ok {
			break
		}
		take(p)
		stats[0].Add(1)
	}
	done.Store(true)
	wg.Wait()

	if n := cleared.Load(); n > 0 {
		t.Errorf("%d items were taken from an already-cleared slot", n)
	}
	for i := range seen {
		if n := seen[i].Load(); n != 1 {
			t.Fatalf("item %d came out %d times", i, n)
		}
	}
	t.Logf("%d items: owner pops %d, steals %d, batch steals %d moving %d",
		items, stats[0].Load(), stats[1].Load(), stats[2].Load(), stats[3].Load())
	if stats[1].Load() == 0 || stats[2].Load() == 0 {
		t.Errorf("thieves never stole (steals %d, batches %d): the test proved nothing",
			stats[1].Load(), stats[2].Load())
	}
}
