package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/braidhq/braid/pkg/eventbus"
	"github.com/braidhq/braid/pkg/records"
	"github.com/braidhq/braid/pkg/testkit/testinfra"
	eventsv1 "github.com/braidhq/braid/proto-events/eventsv1"
	"github.com/segmentio/kafka-go"
	"github.com/stretchr/testify/require"
)

// orchestratorGroup is the orchestrators' consumer group (orchsvc.GroupID).
const orchestratorGroup = "braid-orchestrator"

// tapHeader marks the records a resultTap produced, so it never copies
// its own copies.
const tapHeader = "x-braid-e2e-copy"

// Delays of the tap's third copies.
const (
	tapMinDelay = 200 * time.Millisecond
	tapMaxDelay = 3 * time.Second
)

// resultTap re-produces task.complete records onto task.complete: each
// record of a matching run once at once, and one in three a second time
// after a random delay, as an at-least-once producer and a slow broker
// could. It reads with its own consumer group from the first offset.
type resultTap struct {
	cancel  context.CancelFunc
	done    chan struct{}
	delayed sync.WaitGroup

	mu            sync.Mutex
	dups, triples int
	failed        []error
}

// tapResults starts a tap that copies the results of runs whose workflow
// name satisfies match (read from the run's record in Redis).
func (f *faultStack) tapResults(match func(workflow string) bool) *resultTap {
	return f.tap(eventsv1.TopicTaskComplete, false, match)
}

// tapDispatches starts a tap that copies the dispatches of runs whose
// workflow satisfies match under another key, so that a copy usually lands
// on another partition, and so another worker, than the original: as an
// at-least-once producer retrying to a moved partition could.
func (f *faultStack) tapDispatches(match func(workflow string) bool) *resultTap {
	return f.tap(eventsv1.TopicTaskDispatch, true, match)
}

// tap copies the records of topic (rekeyed when rekey) of runs whose
// workflow satisfies match.
func (f *faultStack) tap(topic string, rekey bool, match func(workflow string) bool) *resultTap {
	t := f.t
	bus := eventbus.Config{Brokers: []string{f.Kafka}, TopicPrefix: f.TopicPrefix}
	cons, err := eventbus.NewConsumer(t.Context(), bus, testinfra.UniqueName(t, "tap"), topic)
	require.NoError(t, err)
	prod, err := eventbus.NewProducer(bus)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	tap := &resultTap{cancel: cancel, done: make(chan struct{})}
	rnd := faultRand(t)
	workflows := map[string]string{} // run → workflow, read once
	go func() {
		defer close(tap.done)
		for ctx.Err() == nil {
			msgs, err := cons.Fetch(ctx, 100)
			if err != nil {
				continue // transient, or ctx ended
			}
			for _, m := range msgs {
				if m.Headers.Get(tapHeader) != "" {
					continue
				}
				// Results are keyed by run id, dispatches by run/node#instance.
				run, _, _ := strings.Cut(string(m.Key), "/")
				if _, ok := workflows[run]; !ok {
					workflows[run] = f.rdb.HGet(ctx, f.keys.Run(run), records.FieldWorkflow).Val()
				}
				if match(workflows[run]) {
					tap.copy(ctx, prod, m, rnd, rekey)
				}
			}
		}
	}()
	f.t.Cleanup(func() {
		tap.stop()
		_ = cons.Close()
		_ = prod.Close()
	})
	return tap
}

// copy publishes m again now (under a random key when rekey) and, one time
// in three, once more later.
func (tap *resultTap) copy(ctx context.Context, prod *eventbus.Producer, m eventbus.Message, rnd *rand.Rand, rekey bool) {
	cp := eventbus.Message{Topic: m.Topic, Key: m.Key, Value: m.Value, Headers: m.Headers.Clone()}
	if rekey {
		cp.Key = []byte(fmt.Sprintf("%s/copy-%d", m.Key, rnd.Int64()))
	}
	cp.Headers.Set(tapHeader, "1")
	tap.publish(ctx, prod, cp)
	tap.mu.Lock()
	tap.dups++
	tap.mu.Unlock()
	if rnd.IntN(3) != 0 {
		return
	}
	delay := between(rnd, tapMinDelay, tapMaxDelay)
	tap.delayed.Go(func() {
		timer := time.NewTimer(delay)
		defer timer.Stop()
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		tap.publish(ctx, prod, cp)
		tap.mu.Lock()
		tap.triples++
		tap.mu.Unlock()
	})
}

// publish sends one copy, recording a failure for stop to report.
func (tap *resultTap) publish(ctx context.Context, prod *eventbus.Producer, m eventbus.Message) {
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := prod.Publish(pctx, m); err != nil && ctx.Err() == nil {
		tap.mu.Lock()
		tap.failed = append(tap.failed, err)
		tap.mu.Unlock()
	}
}

// stop waits for the delayed copies to be sent (at most tapMaxDelay plus
// a publish), stops the tap and returns how many records it duplicated and
// how many of those it sent a third time. Safe to call twice.
func (tap *resultTap) stop() (dups, triples int) {
	waited := make(chan struct{})
	go func() { tap.delayed.Wait(); close(waited) }()
	select {
	case <-waited:
	case <-time.After(tapMaxDelay + 15*time.Second):
	}
	tap.cancel()
	<-tap.done
	tap.delayed.Wait()
	tap.mu.Lock()
	defer tap.mu.Unlock()
	return tap.dups, tap.triples
}

// waitConsumed waits until group has committed every record of
// task.complete that is in the topic now.
func (f *faultStack) waitConsumed(group string, within time.Duration) {
	t := f.t
	topic := f.TopicPrefix + eventsv1.TopicTaskComplete
	ctx := f.ctx(within)
	ends := map[int]int64{}
	conn, err := kafka.DialContext(ctx, "tcp", f.Kafka)
	require.NoError(t, err)
	parts, err := conn.ReadPartitions(topic)
	_ = conn.Close()
	require.NoError(t, err)
	for _, p := range parts {
		pc, err := kafka.DialLeader(ctx, "tcp", f.Kafka, topic, p.ID)
		require.NoError(t, err)
		_, ends[p.ID], err = pc.ReadOffsets()
		_ = pc.Close()
		require.NoError(t, err)
	}
	client := &kafka.Client{Addr: kafka.TCP(f.Kafka), Timeout: 5 * time.Second}
	ids := make([]int, 0, len(ends))
	for id := range ends {
		ids = append(ids, id)
	}
	var behind map[int]int64
	err = poll(within, func() (bool, error) {
		resp, err := client.OffsetFetch(ctx, &kafka.OffsetFetchRequest{GroupID: group, Topics: map[string][]int{topic: ids}})
		if err != nil {
			return false, nil
		}
		behind = map[int]int64{}
		for _, p := range resp.Topics[topic] {
			if ends[p.Partition] > 0 && p.CommittedOffset < ends[p.Partition] { // an empty partition has no offset (-1)
				behind[p.Partition] = ends[p.Partition] - p.CommittedOffset
			}
		}
		return len(behind) == 0, nil
	})
	require.NoError(t, err, "group %s still behind on %s: %v", group, topic, behind)
}
