package deque

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func ptrs(n int) []*int {
	out := make([]*int, n)
	for i := range out {
		v := i
		out[i] = &v
	}
	return out
}

func TestEmpty(t *testing.T) {
	d := New[*int](0)
	_, ok := d.PopBottom()
	require.False(t, ok)
	_, ok = d.Steal()
	require.False(t, ok)
	require.Zero(t, d.StealHalfInto(New[*int](0)))
	require.Zero(t, d.Len())
}

func TestOneItem(t *testing.T) {
	d := New[*int](0)
	p := ptrs(1)[0]

	d.PushBottom(p)
	require.Equal(t, 1, d.Len())
	got, ok := d.PopBottom()
	require.True(t, ok)
	require.Same(t, p, got)
	_, ok = d.PopBottom()
	require.False(t, ok)

	d.PushBottom(p)
	got, ok = d.Steal()
	require.True(t, ok)
	require.Same(t, p, got)
	_, ok = d.PopBottom()
	require.False(t, ok, "the owner must not see an item a thief took")
	_, ok = d.Steal()
	require.False(t, ok)

	dst := New[*int](0)
	d.PushBottom(p)
	require.Equal(t, 1, d.StealHalfInto(dst))
	got, ok = dst.PopBottom()
	require.True(t, ok)
	require.Same(t, p, got)
	require.Zero(t, d.Len())
}

func TestOrder(t *testing.T) {
	d := New[*int](0)
	ps := ptrs(10)
	for _, p := range ps {
		d.PushBottom(p)
	}
	got, _ := d.Steal()
	require.Same(t, ps[0], got, "thieves take the oldest")
	got, _ = d.PopBottom()
	require.Same(t, ps[9], got, "the owner takes the newest")
	dst := New[*int](0)
	require.Equal(t, 4, d.StealHalfInto(dst), "half of 8, rounded up")
	for i := 4; i >= 1; i-- {
		got, _ = dst.PopBottom()
		require.Same(t, ps[i], got, "stolen batch keeps its order")
	}
	for i := 8; i >= 5; i-- {
		got, _ = d.PopBottom()
		require.Same(t, ps[i], got)
	}
	require.Zero(t, d.Len())
}

func TestStealHalfSizes(t *testing.T) {
	for _, tc := range []struct{ have, want int }{
		{1, 1}, {2, 1}, {3, 2}, {7, 4}, {2 * MaxSteal, MaxSteal}, {10 * MaxSteal, MaxSteal},
	} {
		d, dst := New[*int](0), New[*int](0)
		for _, p := range ptrs(tc.have) {
			d.PushBottom(p)
		}
		require.Equal(t, tc.want, d.StealHalfInto(dst), "from %d items", tc.have)
		require.Equal(t, tc.have-tc.want, d.Len())
		require.Equal(t, tc.want, dst.Len())
	}
}

func TestGrowthKeepsItems(t *testing.T) {
	d := New[*int](2)
	ps := ptrs(1000)
	next := 0
	// Interleave steals so that real moves and growth copies a window that
	// wraps around the ring.
	for i, p := range ps {
		d.PushBottom(p)
		if i%3 == 0 {
			got, ok := d.Steal()
			require.True(t, ok)
			require.Same(t, ps[next], got)
			next++
		}
	}
	for ; next < len(ps); next++ {
		got, ok := d.Steal()
		require.True(t, ok)
		require.Same(t, ps[next], got)
	}
	require.Zero(t, d.Len())
	require.LessOrEqual(t, len(d.rg.slots), 1024)
}

func TestWrapAround(t *testing.T) {
	// Start the indices just below 2^32 so they wrap during the test.
	d := New[*int](4)
	start := uint32(math.MaxUint32 - 50)
	d.bot, d.floor = start, start
	d.bottom.Store(start)
	d.head.Store(uint64(start))
	ps := ptrs(100)
	dst := New[*int](0)
	for round := 0; round < 3; round++ {
		for _, p := range ps {
			d.PushBottom(p)
		}
		require.Equal(t, 100, d.Len())
		require.Equal(t, 32, d.StealHalfInto(dst))
		for i := 99; i >= 32; i-- {
			got, ok := d.PopBottom()
			require.True(t, ok)
			require.Same(t, ps[i], got)
		}
		for i := 31; i >= 0; i-- {
			got, ok := dst.PopBottom()
			require.True(t, ok)
			require.Same(t, ps[i], got)
		}
		_, ok := d.PopBottom()
		require.False(t, ok)
	}
}

func TestNoStaleReferences(t *testing.T) {
	d, dst := New[*int](8), New[*int](8)
	for _, p := range ptrs(8) {
		d.PushBottom(p)
	}
	d.StealHalfInto(dst)
	for {
		if _, ok := d.PopBottom(); !ok {
			break
		}
	}
	for i, s := range d.rg.slots {
		require.Nil(t, s, "slot %d still references a taken item", i)
	}
}

// TestLastItemRace: the owner and a thief race for a single item many
// times; exactly one of them gets it each time.
func TestLastItemRace(t *testing.T) {
	rounds := 200000
	if raceEnabled {
		rounds = 20000
	}
	d := New[*int](2)
	p := ptrs(1)[0]
	start := make(chan struct{})
	stolen := make(chan bool)
	go func() {
		for range start {
			_, ok := d.Steal()
			stolen <- ok
		}
	}()
	for i := 0; i < rounds; i++ {
		d.PushBottom(p)
		start <- struct{}{}
		_, popped := d.PopBottom()
		took := <-stolen
		require.True(t, popped != took, "round %d: owner %v, thief %v", i, popped, took)
		require.Zero(t, d.Len())
	}
	close(start)
}
