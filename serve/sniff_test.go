package serve

import (
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
)

const sniffedText = "text/plain; charset=utf-8"

// sniffsAsText never claims text that net/http's sniffing does not
// answer as text: every first byte it admits, followed by text of each
// length up to past the fontobject signature and the 512 bytes sniffed,
// and by every second and third byte; and the bodies it must refuse.
func TestSniffsAsText(t *testing.T) {
	check := func(body string) {
		t.Helper()
		if sniffsAsText(body) && http.DetectContentType([]byte(body)) != sniffedText {
			t.Fatalf("sniffsAsText(%q) but DetectContentType answers %q", body, http.DetectContentType([]byte(body)))
		}
	}
	for c := range 256 {
		first := string([]byte{byte(c)})
		for n := range 40 {
			check(first + strings.Repeat("a", n))
			check(first + strings.Repeat(" ", n))
		}
		for c2 := range 256 {
			for _, c3 := range []byte{0, ' ', 'x', 0x1a, 0xff} {
				check(first + string([]byte{byte(c2), c3}) + "\x00\x00\x00\x00\x00\x00\x00\x00\x00")
			}
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 200000 {
		b := make([]byte, r.IntN(600))
		for i := range b {
			b[i] = byte(r.IntN(256))
			if r.IntN(2) == 0 {
				const picks = "LPaz09 \t\x1b\x00<%BGR"
				b[i] = picks[r.IntN(len(picks))]
			}
		}
		check(string(b))
	}
	for _, body := range []string{"", "<html>", " hello", "%PDF-1.4", "GIF89a", "BMx", "PK\x03\x04", "hello\x00",
		"OggS\x00", "ttcf", "wOFF", strings.Repeat("a", 34) + "LP", "\xef\xbb\xbfhello", "a\x01"} {
		if sniffsAsText(body) {
			t.Errorf("sniffsAsText(%q): want false", body)
		}
	}
	for _, body := range []string{"hello world", "{\"a\": 1}", "[1, 2]", "Hello\r\n", "42", strings.Repeat("x", 600) + "\x00"} {
		if !sniffsAsText(body) {
			t.Errorf("sniffsAsText(%q): want true", body)
		}
	}
}

// FuzzSniffsAsText looks for a body sniffsAsText claims as text that
// net/http does not sniff as text.
func FuzzSniffsAsText(f *testing.F) {
	for _, s := range []string{"hello", "<html>", strings.Repeat("a", 34) + "LP", "ftyp"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		if sniffsAsText(body) && http.DetectContentType([]byte(body)) != sniffedText {
			t.Fatalf("sniffsAsText(%q) but DetectContentType answers %q", body, http.DetectContentType([]byte(body)))
		}
	})
}
