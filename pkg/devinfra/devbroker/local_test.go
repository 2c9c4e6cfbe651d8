package devbroker_test

import (
	"context"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/devinfra/devbroker"
	"github.com/braidhq/braid/pkg/eventbus"
	"github.com/braidhq/braid/proto-events/eventsv1"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kfake"
)

// TestLocalCarriesTheBus: producers and a two-member consumer group of the
// broker's own process work entirely over in-process connections (group
// join, rebalance, fetch, commit), and a client of another process reads the
// same log over TCP.
func TestLocalCarriesTheBus(t *testing.T) {
	var local *devbroker.Local
	c, err := kfake.NewCluster(append(devbroker.Options(t.TempDir(), 6), kfake.ListenFn(func(network, address string) (net.Listener, error) {
		l, err := devbroker.ListenLocal(network, address)
		local = l
		return l, err
	}))...)
	require.NoError(t, err)
	t.Cleanup(c.Close)
	addr := c.ListenAddrs()[0]
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()

	inProcess := eventbus.Config{Brokers: []string{addr}, Dial: local.Dial}
	require.NoError(t, eventbus.EnsureTopics(ctx, inProcess, eventsv1.TopicTaskComplete))
	p, err := eventbus.NewProducer(inProcess)
	require.NoError(t, err)
	defer func() { require.NoError(t, p.Close()) }()
	const n = 300
	msgs := make([]eventbus.Message, n)
	for i := range msgs {
		msgs[i], err = eventbus.NewMessage(eventsv1.TopicTaskComplete, fmt.Sprintf("run-%d", i), &eventsv1.TaskResult{RunId: fmt.Sprintf("run-%d", i), NodeId: "n", Attempt: 1})
		require.NoError(t, err)
	}
	require.NoError(t, p.Publish(ctx, msgs[:n/2]...))

	var (
		mu   sync.Mutex
		seen = map[string]bool{}
		wg   sync.WaitGroup
	)
	members := make([]*eventbus.Consumer, 2)
	for i := range members {
		members[i], err = eventbus.NewConsumer(ctx, inProcess, "g", eventsv1.TopicTaskComplete)
		require.NoError(t, err)
		wg.Go(func() {
			for ctx.Err() == nil {
				got, err := members[i].Fetch(ctx, 50)
				if err != nil {
					return // closed below, or the test timed out
				}
				if members[i].Commit(ctx, got...) != nil {
					return
				}
				mu.Lock()
				for _, m := range got {
					seen[string(m.Key)] = true
				}
				mu.Unlock()
			}
		})
	}
	require.NoError(t, p.Publish(ctx, msgs[n/2:]...))
	require.Eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(seen) == n }, 50*time.Second, 20*time.Millisecond,
		"the in-process group did not receive every record")
	for _, m := range members {
		require.NoError(t, m.Close())
	}
	wg.Wait()
	mem, overTCP := local.Accepted()
	require.Positive(t, mem)
	require.Zero(t, overTCP, "a client given Dial connected over TCP")

	other, err := eventbus.NewConsumer(ctx, eventbus.Config{Brokers: []string{addr}}, "other", eventsv1.TopicTaskComplete)
	require.NoError(t, err)
	defer func() { require.NoError(t, other.Close()) }()
	var total int
	for total < n {
		got, err := other.Fetch(ctx, n)
		require.NoError(t, err, "over TCP: fetched %d of %d", total, n)
		total += len(got)
	}
	_, overTCP = local.Accepted()
	require.Positive(t, overTCP)
}
