package eventbus

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// waitUntil calls check every tick, on the test goroutine (so check may
// use require), until it reports done, and fails with check's last state
// once waitFor has passed.
func waitUntil(t *testing.T, what string, check func() (done bool, state string)) {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	ticker := time.NewTicker(tick)
	defer ticker.Stop()
	for {
		done, state := check()
		if done {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: gave up after %s: %s", what, waitFor, state)
		}
		<-ticker.C
	}
}

// seqRecord is record seq of key, valued "key seq".
func seqRecord(topic, key string, seq int) Message {
	return Message{Topic: topic, Key: []byte(key), Value: []byte(key + " " + strconv.Itoa(seq))}
}

// publishSeqs publishes records from..to-1 of every key of keys on topic,
// one Publish per seq; phase names the step in failures.
func publishSeqs(t *testing.T, p *Producer, topic string, keys []string, from, to int, phase string) {
	t.Helper()
	for seq := from; seq < to; seq++ {
		batch := make([]Message, len(keys))
		for i, key := range keys {
			batch[i] = seqRecord(topic, key, seq)
		}
		require.NoError(t, p.Publish(testCtx(t), batch...), "%s: publish %d", phase, seq)
	}
}

// seqOf parses a seqRecord's value.
func seqOf(t *testing.T, m Message) (key string, seq int) {
	t.Helper()
	k, s, ok := strings.Cut(string(m.Value), " ")
	require.True(t, ok, "value %q", m.Value)
	n, err := strconv.Atoi(s)
	require.NoError(t, err)
	require.Equal(t, k, string(m.Key))
	return k, n
}

// requireKeyOrder checks that msgs hold records 0..n-1 of every key in
// keys and that, keeping each record's first delivery (redeliveries and
// retried writes come twice), every key's records came in order.
func requireKeyOrder(t *testing.T, msgs []Message, keys []string, n int) {
	t.Helper()
	next := map[string]int{}
	for _, m := range msgs {
		k, seq := seqOf(t, m)
		switch {
		case seq == next[k]:
			next[k]++
		case seq > next[k]:
			t.Fatalf("key %s: record %d arrived before record %d", k, seq, next[k])
		}
	}
	for _, k := range keys {
		require.Equal(t, n, next[k], "key %s: records delivered", k)
	}
}

// groupReader fetches from a consumer in the background and commits each
// batch, trying a failed commit again (the coordinator may be moving)
// until it succeeds or the reader stops. Transient errors are counted, not
// fatal: they are what the cluster tests provoke.
type groupReader struct {
	mu     sync.Mutex
	got    []Message
	errs   []string
	cancel context.CancelFunc
	done   chan struct{}
}

// readGroup starts a groupReader on c; it stops on cleanup or stop.
func readGroup(t *testing.T, c *Consumer) *groupReader {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r := &groupReader{cancel: cancel, done: make(chan struct{})}
	t.Cleanup(r.stop)
	go r.run(ctx, c)
	return r
}

func (r *groupReader) run(ctx context.Context, c *Consumer) {
	defer close(r.done)
	for ctx.Err() == nil {
		msgs, err := c.Fetch(ctx, 100)
		if err != nil {
			if errors.Is(err, ErrClosed) || ctx.Err() != nil {
				return
			}
			r.note("fetch", err)
			continue
		}
		r.mu.Lock()
		r.got = append(r.got, msgs...)
		r.mu.Unlock()
		r.commit(ctx, c, msgs)
	}
}

// commit commits msgs, again after each failure, until ctx ends.
func (r *groupReader) commit(ctx context.Context, c *Consumer, msgs []Message) {
	for try := 0; ctx.Err() == nil; try++ {
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := c.Commit(cctx, msgs...)
		cancel()
		if err == nil || errors.Is(err, ErrClosed) {
			return
		}
		r.note("commit", err)
		select {
		case <-ctx.Done():
		case <-time.After(backoff(try)):
		}
	}
}

func (r *groupReader) note(op string, err error) {
	r.mu.Lock()
	r.errs = append(r.errs, fmt.Sprintf("%s: %v", op, err))
	r.mu.Unlock()
}

// stop ends the reader and waits for it; safe twice.
func (r *groupReader) stop() {
	r.cancel()
	<-r.done
}

// messages returns a copy of what was read so far.
func (r *groupReader) messages() []Message {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Message(nil), r.got...)
}

// errors returns the transient errors seen so far.
func (r *groupReader) errors() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.errs...)
}
