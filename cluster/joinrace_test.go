package cluster

import (
	"context"
	"net"
	"os/exec"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"
)

// TestJoinsAtOnceOnAFreshServer: three nodes open the buckets and take a
// number at the same moment on a fresh nats-server (the installed
// binary: Debian's 2.9.10 loses some requests made while a stream is
// created), fifty times: every node gets a number, all different.
// Before requests were repeated (retry.go), in one run of fifty rounds in three
// had a node wait out its whole deadline on an unanswered Get.
func TestJoinsAtOnceOnAFreshServer(t *testing.T) {
	server, err := exec.LookPath("nats-server")
	if err != nil {
		t.Skip("no nats-server binary (apt-get install nats-server)")
	}
	for round := range 50 {
		url := startNATSServer(t, server)
		numbers := make([]int, 3)
		var wg sync.WaitGroup
		for i := range numbers {
			wg.Go(func() {
				nc, err := nats.Connect(url)
				if err != nil {
					t.Error(err)
					return
				}
				defer nc.Close()
				js, _ := jetstream.New(nc)
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				ids, err := bucket(ctx, js, "race_ids", 0)
				if err == nil {
					_, err = bucket(ctx, js, "race_names", nameTTL)
				}
				if err == nil {
					numbers[i], err = takeNumber(ctx, ids)
				}
				if err != nil {
					t.Errorf("round %d, node %d: %v", round, i, err)
				}
			})
		}
		wg.Wait()
		slices.Sort(numbers)
		require.Equal(t, []int{1, 2, 3}, numbers, "round %d", round)
	}
}

// startNATSServer starts the nats-server binary with JetStream on a free
// port and a store of its own, and returns its URL once it takes
// clients; the test's end stops it.
func startNATSServer(t *testing.T, server string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(server, "-js", "-a", "127.0.0.1", "-p", strconv.Itoa(port), "-sd", t.TempDir())
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	url := "nats://127.0.0.1:" + strconv.Itoa(port)
	for { // until it listens; a server that never does fails the test's own timeout
		nc, err := nats.Connect(url)
		if err == nil {
			nc.Close()
			return url
		}
		time.Sleep(10 * time.Millisecond)
	}
}
