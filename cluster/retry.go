package cluster

// Requests that the server loses. nats-server 2.9 (Debian 12's 2.9.10,
// the one docs/cluster-operations.md is tried against) drops some
// JetStream requests made while a stream is being created — three nodes
// joining a fresh server at once: a key-value Get (a direct get) or a
// bucket's create that is never answered (here in one of three runs of
// fifty three-node joins, cluster/joinrace_test.go). The same request made again is answered. So reads and bucket
// opens, which can be repeated without effect, are made with a deadline
// of their own and made again while the caller's context lasts. Writes
// are not: a write that was done but not acknowledged, made again,
// would meet itself as another node's (ErrKeyExists).

import (
	"context"
	"errors"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// firstAttempt is the deadline of a repeatable request's first attempt;
// each further attempt has twice the last one's, up to lastAttempt.
const (
	firstAttempt = time.Second
	lastAttempt  = 8 * time.Second
)

// repeated runs op with a deadline of its own, and again with a longer
// one each time that deadline passes unanswered, until ctx ends.
func repeated[T any](ctx context.Context, op func(context.Context) (T, error)) (T, error) {
	wait := firstAttempt
	for {
		attempt, cancel := context.WithTimeout(ctx, wait)
		v, err := op(attempt)
		cancel()
		lost := errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout)
		if !lost || ctx.Err() != nil {
			return v, err
		}
		wait = min(2*wait, lastAttempt)
	}
}

// get is kv.Get(key), repeated when unanswered.
func get(ctx context.Context, kv jetstream.KeyValue, key string) (jetstream.KeyValueEntry, error) {
	return repeated(ctx, func(ctx context.Context) (jetstream.KeyValueEntry, error) { return kv.Get(ctx, key) })
}
