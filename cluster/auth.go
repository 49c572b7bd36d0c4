package cluster

// A cluster only its members can use: the cluster secret and the
// incarnations.
//
// NATS lets any client of the account publish on any subject it is
// permitted: without more, such a client could start processes on every
// node (a spawn request), deliver messages with any sender, kill
// processes, reset connections, or send one frame with a live node's
// number and a high sequence number that makes the receiver drop all of
// that node's later traffic as duplicates. So, with a secret
// (Config.Secret: --cluster-secret-file, $LUARUN_CLUSTER_SECRET), like
// Erlang's cookie but checked on everything:
//
//   - every batch of frames (messages, calls, signals, ticks, resets:
//     messages.go) starts with an HMAC-SHA256 over its subject (the
//     receiving node), its header (the sending node's number and
//     incarnation, the receiving node's incarnation) and its frames (each
//     with its source and its sequence number); the receiver verifies it
//     before it reads a frame or touches a sequence number, and drops and
//     counts (Stats.Forged) what fails, and any frame whose source is not
//     the batch's sender;
//   - every spawn request carries one over its subject, the sender's
//     number and incarnation, the receiver's incarnation, a sequence
//     number (a replayed request is refused: replayWindow) and the
//     request; the answer carries one over the request's MAC and the
//     answer;
//   - every heartbeat carries one over its text (number, name,
//     incarnation, beat number);
//   - every name in the registry carries one over its key and holder.
//
// The MAC gives authenticity, not secrecy: a client that may subscribe
// to the cluster's subjects reads what nodes send (the operator's guide,
// docs/cluster-operations.md, names the permissions that keep them out).
//
// An incarnation is a number a node takes when it joins: the time in
// milliseconds and random low bits, so a later incarnation of a node
// number is a larger one (on machines whose clocks agree within the time
// between the two joins). Heartbeats and batches carry it; a batch for
// another incarnation of this node's number is dropped (Stats.Stale),
// and one from an older incarnation of its sender too.

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash"
	"time"
)

// macLen is the length of a MAC (HMAC-SHA256).
const macLen = sha256.Size

// newIncarnation is a new incarnation number: milliseconds since the
// epoch above 22 random bits (never 0).
func newIncarnation() uint64 {
	var b [4]byte
	rand.Read(b[:]) // never fails (crypto/rand)
	return uint64(time.Now().UnixMilli())<<22 | uint64(binary.BigEndian.Uint32(b[:])&(1<<22-1)) | 1
}

// signer makes and checks MACs with the cluster's secret; the zero
// signer (no secret) makes none and accepts anything.
type signer struct {
	secret []byte
}

// on reports whether there is a secret.
func (s signer) on() bool { return len(s.secret) > 0 }

// size is the length of a MAC this signer puts in front of what it
// signs: 0 without a secret.
func (s signer) size() int {
	if s.on() {
		return macLen
	}
	return 0
}

// newHash is an HMAC of the secret, for one goroutine's repeated use.
func (s signer) newHash() hash.Hash { return hmac.New(sha256.New, s.secret) }

// sum is the MAC of the parts, in order, each after its length (so that
// no two lists of parts give the same input).
func (s signer) sum(h hash.Hash, out []byte, parts ...[]byte) []byte {
	if h == nil {
		h = s.newHash()
	}
	h.Reset()
	var l [4]byte
	for _, p := range parts {
		binary.BigEndian.PutUint32(l[:], uint32(len(p)))
		h.Write(l[:])
		h.Write(p)
	}
	return h.Sum(out)
}

// verify reports whether mac is the MAC of the parts (always, without a
// secret).
func (s signer) verify(h hash.Hash, mac []byte, parts ...[]byte) bool {
	if !s.on() {
		return true
	}
	var buf [macLen]byte
	return len(mac) == macLen && hmac.Equal(mac, s.sum(h, buf[:0], parts...))
}

// hexSum is sum in hexadecimal, for text (heartbeats, registry values).
func (s signer) hexSum(parts ...[]byte) string {
	var buf [macLen]byte
	return hex.EncodeToString(s.sum(nil, buf[:0], parts...))
}

// verifyHex is verify of a hexadecimal MAC.
func (s signer) verifyHex(mac string, parts ...[]byte) bool {
	if !s.on() {
		return true
	}
	raw, err := hex.DecodeString(mac)
	return err == nil && s.verify(nil, raw, parts...)
}

// replayWindow is how many sequence numbers below the highest one seen
// a receiver still takes (once each), so that requests sent concurrently
// may arrive out of order.
const replayWindow = 64

// window is the spawn requests seen from one incarnation of a node: the
// highest sequence number, and which of the replayWindow below it came.
type window struct {
	incarnation uint64
	max         uint64
	seen        uint64 // bit i: max-i came
}

// take reports whether seq of incarnation inc is new (and records it):
// false for a number seen already, one too old for the window, or an
// incarnation older than the last seen.
func (w *window) take(inc, seq uint64) bool {
	switch {
	case inc < w.incarnation:
		return false
	case inc > w.incarnation:
		*w = window{incarnation: inc}
	}
	switch {
	case seq == 0:
		return false
	case seq > w.max:
		shift := seq - w.max
		if shift >= 64 {
			w.seen = 0
		} else {
			w.seen <<= shift
		}
		w.seen |= 1
		w.max = seq
		return true
	case w.max-seq >= replayWindow:
		return false
	}
	bit := uint64(1) << (w.max - seq)
	if w.seen&bit != 0 {
		return false
	}
	w.seen |= bit
	return true
}
