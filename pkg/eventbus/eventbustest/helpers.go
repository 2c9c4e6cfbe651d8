package eventbustest

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/eventbus"
	"github.com/stretchr/testify/require"
)

// waitFor bounds every wait of a rule. Group joins and rebalances take a
// few seconds against real brokers; the race detector slows them down.
const waitFor = 30 * time.Second

// groupSeq makes group names unique within the test binary.
var groupSeq atomic.Uint64

// newGroup returns a consumer group name no other test uses, in this
// process or another one sharing the broker.
func newGroup() string {
	return fmt.Sprintf("conformance-%d-%d", os.Getpid(), groupSeq.Add(1))
}

// ctxFor returns a context bounded by waitFor, cancelled on cleanup.
func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	t.Cleanup(cancel)
	return ctx
}

// record builds the n-th record of key on topic; its value is "key/n", so
// a reader can tell which record it got without decoding anything.
func record(topic, key string, n int) eventbus.Message {
	return eventbus.Message{
		Topic: topic, Key: []byte(key), Value: []byte(key + "/" + strconv.Itoa(n)),
		Headers: eventbus.Headers{{Key: "seq", Value: []byte(strconv.Itoa(n))}},
	}
}

// records builds records 0..n-1 of key.
func records(topic, key string, n int) []eventbus.Message {
	out := make([]eventbus.Message, n)
	for i := range out {
		out[i] = record(topic, key, i)
	}
	return out
}

// seqOf returns the number a record was built with (record).
func seqOf(t *testing.T, m eventbus.Message) int {
	t.Helper()
	_, n, ok := strings.Cut(string(m.Value), "/")
	require.True(t, ok, "value %q was not written by the suite", m.Value)
	i, err := strconv.Atoi(n)
	require.NoError(t, err)
	return i
}

// fetchN fetches until n records arrived (the last batch may bring more).
func fetchN(t *testing.T, c Consumer, n int) []eventbus.Message {
	t.Helper()
	ctx := ctxFor(t)
	var got []eventbus.Message
	for len(got) < n {
		msgs, err := c.Fetch(ctx, n-len(got))
		require.NoError(t, err, "fetched %d of %d records", len(got), n)
		got = append(got, msgs...)
	}
	return got
}

// fetchUntil fetches until a record with value stop arrives and returns
// every record before it: a rule publishes stop last, so what precedes it
// is exactly what the group had left to read, and a missing record fails
// at once instead of after a timeout.
func fetchUntil(t *testing.T, c Consumer, stop string) []eventbus.Message {
	t.Helper()
	ctx := ctxFor(t)
	var got []eventbus.Message
	for {
		msgs, err := c.Fetch(ctx, 100)
		require.NoError(t, err, "fetched %d records, never %q", len(got), stop)
		for _, m := range msgs {
			if string(m.Value) == stop {
				return got
			}
			got = append(got, m)
		}
	}
}

// seqs returns the numbers of msgs, in order.
func seqs(t *testing.T, msgs []eventbus.Message) []int {
	out := make([]int, len(msgs))
	for i, m := range msgs {
		out[i] = seqOf(t, m)
	}
	return out
}
