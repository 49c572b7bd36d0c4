package lua

// luarun: one string for each short key text.
//
// A table lookup compares the key it looks for with the key whose hash
// matches, and Go compares two strings by pointer when they share their
// bytes, with a byte loop (memeqbody) when they do not. The keys of the
// shared library tables (process.send, string.format, the base functions)
// come from Go string literals, a script's constants ("process", "send")
// from its source: equal text, other bytes, so every process.send of
// every script compared bytes, twice (2 % of a ping-pong hop).
//
// So the compiler's string constants and the string keys of the tables
// Share marks go through internKey: one string per text, whichever came
// first, for the whole program (a script may be compiled before a
// runtime shares its libraries, or after). Only short texts (a key's),
// each copied (a constant may be a slice of its whole source file), and
// a bounded number of them (internKey): code a program generates and
// compiles for ever, or modules it writes and requires, cannot grow the
// set without bound; past the bound, texts already in it are still
// taken, and the others compare by bytes as before.

import (
	"strings"
	"sync"
	"sync/atomic"
)

const (
	maxInternLen = 40      // longer texts are no table keys worth it
	maxInterned  = 1 << 14 // texts the compiler adds at most (shared tables: 4×)
)

var (
	interned      sync.Map     // string → LString: the one string of each text
	internedCount atomic.Int32 // texts in interned
)

// internKey returns the program's one string for s's text: s itself if
// it is the first (or too long, or the set is full for it). A constant
// (shared false) is added while the set holds fewer than maxInterned
// texts, a shared table's key while it holds fewer than four times that:
// a program that compiled a great many constants first still gets its
// libraries' keys in, and neither a script that compiles generated code
// for ever nor one that requires module after module grows the set past
// its bound.
func internKey(s LString, shared bool) LString {
	if len(s) > maxInternLen {
		return s
	}
	if v, ok := interned.Load(string(s)); ok {
		return v.(LString)
	}
	limit := int32(maxInterned)
	if shared {
		limit *= 4
	}
	if internedCount.Load() >= limit {
		return s
	}
	// A copy: s may be a slice of a whole source file, which the set
	// would otherwise keep alive for good.
	v, loaded := interned.LoadOrStore(string(s), LString(strings.Clone(string(s))))
	if !loaded {
		internedCount.Add(1)
	}
	return v.(LString)
}

// shareKeys gives tb's string keys their interned strings (equal text:
// no lookup can tell). Called by Share before tb is read by others.
func (tb *LTable) shareKeys() {
	for i := range tb.node {
		n := &tb.node[i]
		if k, ok := n.key.(LString); ok && n.val != LNil && n.val != nil {
			n.key = internKey(k, true)
		}
	}
}
