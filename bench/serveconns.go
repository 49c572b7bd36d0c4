package main

// Issue 28's connection row: 2,000 keep-alive connections held open at
// once, each sending a hello request every second (spread over the
// second), against http.serve and against Go's net/http with the same
// client. Every request must be answered; the process's RSS is read
// once all connections are open and have been served once (client and
// server share the process: the figure is the growth from before the
// first dial, for client and server together, the same client in both).

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// heldConns is the connection row's result.
type heldConns struct {
	sent, served int
	p99          time.Duration
	rssMB        float64
	errText      string
}

func (h heldConns) String() string {
	if h.errText != "" {
		return h.errText
	}
	return fmt.Sprintf("%d/%d served, p99 %s, RSS +%.0f MB", h.served, h.sent, fmtDur(h.p99), h.rssMB)
}

func serveConns() []row {
	conns, rounds := size(2000, 500), size(5, 3)
	addr, stop := startServer(serveLua, "hello")
	l := holdConns(addr, conns, rounds)
	stop()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	check(err)
	srv := &http.Server{Handler: http.HandlerFunc(helloHandler)}
	go srv.Serve(ln)
	g := holdConns(ln.Addr().String(), conns, rounds)
	srv.Close()
	verdict := "all served"
	if l.served != l.sent || l.sent != conns*rounds {
		verdict = "NOT all served"
	}
	return []row{{
		workload: fmt.Sprintf("serve %d keep-alive conns, 1 req/s each, %d s", conns, rounds),
		luarun:   l.String(), baseline: "net/http: " + g.String(),
		ratio: fmt.Sprintf("RSS %.2fx", l.rssMB/g.rssMB), target: verdict,
	}}
}

// holdConns opens conns connections to addr and, on each, sends a hello
// request every second for rounds seconds, the connections' turns spread
// over the second.
func holdConns(addr string, conns, rounds int) heldConns {
	debug.FreeOSMemory() // what an earlier run left is not counted
	rss0 := rssMB()
	cs := make([]net.Conn, 0, conns)
	defer func() {
		for _, c := range cs {
			c.Close()
		}
	}()
	for range conns {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			return heldConns{errText: fmt.Sprintf("dial after %d connections: %v", len(cs), err)}
		}
		cs = append(cs, c)
	}
	var sent, served atomic.Int64
	var mu sync.Mutex
	var lats []time.Duration
	var rss float64 // MB grown since before the first dial
	start := time.Now().Add(100 * time.Millisecond)
	var wg sync.WaitGroup
	for i, c := range cs {
		offset := time.Duration(i) * time.Second / time.Duration(conns)
		wg.Go(func() {
			mine := make([]time.Duration, 0, rounds)
			r := bufio.NewReader(c)
			req := []byte("GET /?name=c" + strconv.Itoa(i) + " HTTP/1.1\r\nHost: bench\r\n\r\n")
			for round := range rounds {
				time.Sleep(time.Until(start.Add(time.Duration(round)*time.Second + offset)))
				sent.Add(1)
				t0 := time.Now()
				if err := exchange(c, r, req); err != nil {
					continue
				}
				served.Add(1)
				mine = append(mine, time.Since(t0))
			}
			mu.Lock()
			lats = append(lats, mine...)
			mu.Unlock()
		})
	}
	rssRead := make(chan struct{})
	go func() { // once every connection has been served once (rounds >= 2)
		defer close(rssRead)
		time.Sleep(time.Until(start.Add(1500 * time.Millisecond)))
		rss = rssMB() - rss0
	}()
	wg.Wait()
	<-rssRead
	slices.Sort(lats)
	h := heldConns{sent: int(sent.Load()), served: int(served.Load()), rssMB: rss}
	if len(lats) > 0 {
		h.p99 = lats[len(lats)*99/100]
	}
	return h
}

// exchange sends one request on c and reads a 200 answer.
func exchange(c net.Conn, r *bufio.Reader, req []byte) error {
	if _, err := c.Write(req); err != nil {
		return err
	}
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		return err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err == nil && resp.StatusCode != 200 {
		err = fmt.Errorf("status %d", resp.StatusCode)
	}
	return err
}

// rssMB is the process's resident set (VmRSS) in MB.
func rssMB() float64 { return procFieldMB("/proc/self/status", "VmRSS:") }

// memAvailableMB is the machine's available memory (MemAvailable) in MB.
func memAvailableMB() float64 { return procFieldMB("/proc/meminfo", "MemAvailable:") }

// procFieldMB is the field of a /proc file given in kB, in MB (0 if
// absent).
func procFieldMB(path, field string) float64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, field); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			return kb / 1024
		}
	}
	return 0
}
