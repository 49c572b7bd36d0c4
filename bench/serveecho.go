package main

// Issue 28's TCP row: an echo service (a process per connection reading
// a line and writing it back, net's yielding reads and writes) beside a
// Go echo server (a goroutine per connection, bufio lines), with the
// same client: echoConns connections, each with a writer keeping up to
// echoWindow lines in flight and a reader counting the lines that come
// back. Throughput in lines/s and MB/s (the echoed bytes).

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

const echoLua = `
function conn(c)
  while true do
    local line = c:read("l")
    if not line then return end
    c:write(line, "\n")
  end
end
function main(inbox)
  local l = assert(net.listen("127.0.0.1:0"))
  process.send(inbox, l.addr)
  while true do
    local c = l:accept()
    if not c then return end
    process.spawn("conn", c)
  end
end`

const (
	echoConns  = 16
	echoWindow = 64 // lines a connection has sent and not yet had back
	echoLine   = 64 // bytes per line, the newline included
)

// echoResult is one echo run's throughput.
type echoResult struct {
	lines   float64 // per second
	mb      float64 // per second
	errText string
}

func (e echoResult) String() string {
	if e.errText != "" {
		return e.errText
	}
	return fmt.Sprintf("%.0f lines/s, %.1f MB/s", e.lines, e.mb)
}

func serveEcho() []row {
	dur := time.Duration(size(5, 2)) * time.Second
	addr, stop := startServer(echoLua, "")
	l := echoLoad(addr, dur)
	stop()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	check(err)
	go goEcho(ln)
	g := echoLoad(ln.Addr().String(), dur)
	ln.Close()
	return []row{{
		workload: fmt.Sprintf("serve TCP echo (%d conns, %d-byte lines)", echoConns, echoLine),
		luarun:   l.String(), baseline: "Go echo: " + g.String(),
		ratio: fmt.Sprintf("%.2fx", l.lines/g.lines), target: "reported",
	}}
}

// goEcho is the Go echo server: a goroutine per connection.
func goEcho(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			r, w := bufio.NewReader(c), bufio.NewWriter(c)
			for {
				line, err := r.ReadSlice('\n')
				if err != nil {
					return
				}
				w.Write(line)
				if r.Buffered() == 0 { // flush when no more lines are at hand
					if w.Flush() != nil {
						return
					}
				}
			}
		}()
	}
}

// echoLoad drives an echo server at addr for dur.
func echoLoad(addr string, dur time.Duration) echoResult {
	line := append(bytes.Repeat([]byte("x"), echoLine-1), '\n')
	var got atomic.Int64
	stop := time.Now().Add(dur)
	quit := make(chan struct{})
	time.AfterFunc(dur, func() { close(quit) })
	var wg sync.WaitGroup
	errs := make(chan error, echoConns)
	for range echoConns {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			return echoResult{errText: "dial: " + err.Error()}
		}
		credit := make(chan struct{}, echoWindow)
		for range echoWindow {
			credit <- struct{}{}
		}
		wg.Go(func() { // writer: a line per credit, until quit
			w := bufio.NewWriter(c)
			for {
				select {
				case <-credit:
				case <-quit:
					return
				}
				w.Write(line)
				if len(credit) == 0 && w.Flush() != nil {
					return
				}
			}
		})
		wg.Go(func() { // reader: counts the lines back until stop, returns credit
			defer c.Close()
			c.SetReadDeadline(stop)
			r := bufio.NewReader(c)
			for {
				if _, err := r.ReadSlice('\n'); err != nil {
					if ne, ok := err.(net.Error); !ok || !ne.Timeout() {
						errs <- err
					}
					return
				}
				got.Add(1)
				credit <- struct{}{}
			}
		})
	}
	wg.Wait()
	select {
	case err := <-errs:
		return echoResult{errText: "echo: " + err.Error()}
	default:
	}
	n := float64(got.Load()) / dur.Seconds()
	return echoResult{lines: n, mb: n * echoLine / 1e6}
}
