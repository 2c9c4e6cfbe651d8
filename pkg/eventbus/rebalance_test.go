package eventbus

import (
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/testkit/testinfra"
	"github.com/braidhq/braid/proto-events/eventsv1"
	"github.com/stretchr/testify/require"
)

// TestRebalanceDoesNotWaitOutTheLongPoll: a generation change and a Close
// end the members' held fetches instead of waiting for them. The long-poll
// here is 20 s and the group's session and rebalance timeouts 30 s, so a
// member that waited out its fetches would keep a joining member — and
// every partition — waiting about 20 s; the bounds below are a quarter of
// that and more.
func TestRebalanceDoesNotWaitOutTheLongPoll(t *testing.T) {
	k := testinfra.StartKafka(t)
	b := newBus(t, k, eventsv1.TopicTaskComplete)
	b.cfg.MaxWait = 20 * time.Second
	b.cfg.SessionTimeout = 30 * time.Second
	b.cfg.RebalanceTimeout = 30 * time.Second
	p := b.producer(t)
	keys := keysByPartition(t, DefaultPartitions)
	group := testinfra.UniqueName(t, "g")

	ca, err := NewConsumer(t.Context(), b.cfg, group, eventsv1.TopicTaskComplete)
	require.NoError(t, err)
	t.Cleanup(func() { _ = ca.Close() }) // closed below; twice is fine
	a := collect(t, ca)
	ids := round(t, p, keys, 1)
	require.Eventually(t, func() bool { return a.has(t, ids...) }, waitFor, tick, "the first member never received round 1")
	// Every partition reader of a now holds a fetch open on the broker.

	// b's join completes only once a has rejoined, which a does after its
	// partition readers returned; nothing is published meanwhile, so held
	// fetches would stay held for the whole long-poll.
	joined := time.Now()
	cb := b.consumer(t, group, eventsv1.TopicTaskComplete)
	var generations int64
	require.Eventually(t, func() bool {
		generations += cb.r.Stats().Rebalances // counts since the last call
		return generations > 0
	}, 5*time.Second, tick, "the joining member had no generation after 5 s: the rebalance waited for the first member's held fetches")
	t.Logf("second member in a generation %v after it joined", time.Since(joined).Round(time.Millisecond))
	bb := collect(t, cb)
	ids = round(t, p, keys, 2)
	require.Eventually(t, func() bool {
		gotB, _ := bb.snapshot()
		return len(filterRound(t, gotB, 2)) > 0 && len(partitionsOf(t, a, 2))+len(partitionsOf(t, bb, 2)) == len(keys)
	}, waitFor, tick, "round 2 not consumed by both members")

	closing := time.Now()
	require.NoError(t, ca.Close())
	require.Less(t, time.Since(closing), 5*time.Second, "Close waited for the member's held fetches")
}
