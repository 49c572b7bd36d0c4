//go:build unix

package procgroup

import (
	"bufio"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestKillAllKillsTheGroup: KillAll ends a recorded command and the
// child it put in the background (its group), and Ended forgets it.
func TestKillAllKillsTheGroup(t *testing.T) {
	cmd := exec.Command("sh", "-c", "sleep 300 & echo $!; sleep 300")
	cmd.SysProcAttr = Attr(nil)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	Started(cmd.Process)
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	child, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatal(err)
	}
	if Live() != 1 {
		t.Fatalf("Live() = %d, want 1", Live())
	}
	KillAll()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second): // only bounds a hang
		t.Fatal("the command outlived KillAll")
	}
	Ended(cmd.Process)
	if Live() != 0 {
		t.Fatalf("Live() = %d after Ended, want 0", Live())
	}
	for deadline := time.Now().Add(30 * time.Second); syscall.Kill(child, 0) == nil; time.Sleep(10 * time.Millisecond) {
		if zombie(child) {
			return
		}
		if time.Now().After(deadline) {
			syscall.Kill(child, syscall.SIGKILL)
			t.Fatalf("the background child %d outlived KillAll", child)
		}
	}
}

// zombie reports whether pid has ended but not been reaped yet.
func zombie(pid int) bool {
	b, err := exec.Command("ps", "-o", "stat=", "-p", strconv.Itoa(pid)).Output()
	return err == nil && strings.HasPrefix(strings.TrimSpace(string(b)), "Z")
}
