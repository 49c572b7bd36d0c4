package serve

// A handler's string answer is text/plain; charset=utf-8. Setting that
// header costs net/http a map and, when the answer is written, a copy
// of the map (four allocations, some 760 bytes a request: more than the
// rest of the response). Without a Content-Type, net/http sniffs the
// body (http.DetectContentType) and sets the same value when the body is
// text; sniffsAsText tells, in a few nanoseconds, the bodies sure to
// sniff as text, so the header is set only for the others. Sound, not
// complete: a false answer only costs the header.
//
// DetectContentType answers text/plain; charset=utf-8 when no signature
// matches and none of the first 512 bytes is binary. Every signature
// but one is anchored at the first byte (after white space for HTML and
// XML, which begin with '<'), so a first byte none of them begins with
// rules them out; the exception, application/vnd.ms-fontobject, is "LP"
// at offset 34. TestSniffsAsText checks the claims against
// DetectContentType itself, so a new signature in a later Go shows.

// textFirst holds the first bytes no signature begins with: ASCII
// letters, digits and punctuation, less the signatures' first letters
// (BM, GIF, RIFF/Rar!, FORM, ID3, OggS/OTTO, MThd, PK, ttcf, wOFF) and
// '<' and '%' (HTML, XML, PDF, PostScript).
var textFirst = func() (t [256]bool) {
	for c := '!'; c <= '~'; c++ {
		t[c] = true
	}
	for _, c := range "BGRFIOMPtw<%" {
		t[c] = false
	}
	return t
}()

// sniffsAsText reports whether net/http's sniffing answers text/plain;
// charset=utf-8 for body (false for an empty one: net/http sets no type).
func sniffsAsText(body string) bool {
	if body == "" || !textFirst[body[0]] {
		return false
	}
	if len(body) > 512 { // DetectContentType reads no further
		body = body[:512]
	}
	if len(body) >= 36 && body[34:36] == "LP" {
		return false
	}
	for i := 0; i < len(body); i++ {
		if c := body[i]; c < 0x20 && !textControl(c) {
			return false
		}
	}
	return true
}

// textControl reports whether control byte c is one DetectContentType
// allows in text: tab, LF, form feed, CR, escape.
func textControl(c byte) bool {
	return c == '\t' || c == '\n' || c == '\x0c' || c == '\r' || c == 0x1b
}
