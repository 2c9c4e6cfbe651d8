// Package floor measures the transport floor: what one Braid hop would cost
// if the engine did nothing but move a message and store one record. A loop
// consumes a record from a kfake topic, writes one Redis hash field (HSET,
// the size of a node record), publishes the next record and commits, using
// pkg/eventbus with the services' settings. Every benchmark figure is read
// as a ratio to these numbers.
package floor

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/braidhq/braid/pkg/eventbus"
	"github.com/braidhq/braid/pkg/statestore"
	eventsv1 "github.com/braidhq/braid/proto-events/eventsv1"
	"github.com/redis/go-redis/v9"
)

// Bounds of one measurement.
const (
	joinTimeout = 60 * time.Second // the consumer group join and the first record
	ioTimeout   = 10 * time.Second // one Redis write, publish or commit
	fetchLimit  = 512              // records per Fetch, like the orchestrator's batches
)

// record is the node-record-sized value the loop stores per hop.
const record = `{"s":"succeeded","a":1,"q":1795000000000,"t":1795000000001,"f":1795000000002,"w":"worker-1"}`

// Loop is one measurement's topic, consumer, producer and Redis hash.
type Loop struct {
	cons *eventbus.Consumer
	prod *eventbus.Producer
	rdb  redis.UniversalClient
	key  string
}

// Open creates a unique topic under bus (its TopicPrefix must be unique to
// this measurement), joins a consumer group on it and opens a producer.
// Records are written to one Redis hash built by keys (a node-records
// hash of a run named "floor").
func Open(ctx context.Context, bus eventbus.Config, rdb redis.UniversalClient, keys statestore.Keys) (*Loop, error) {
	bus.ClientID = "braid-bench-floor"
	if err := eventbus.EnsureTopics(ctx, bus, eventsv1.TopicTaskComplete); err != nil {
		return nil, fmt.Errorf("floor: %w", err)
	}
	cons, err := eventbus.NewConsumer(ctx, bus, "braid-bench-floor", eventsv1.TopicTaskComplete)
	if err != nil {
		return nil, fmt.Errorf("floor: %w", err)
	}
	prod, err := eventbus.NewProducer(bus)
	if err != nil {
		_ = cons.Close()
		return nil, fmt.Errorf("floor: %w", err)
	}
	return &Loop{cons: cons, prod: prod, rdb: rdb, key: keys.Nodes("floor")}, nil
}

// Close releases the consumer and producer and deletes the hash.
func (l *Loop) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), ioTimeout)
	defer cancel()
	return errors.Join(l.cons.Close(), l.prod.Close(), l.rdb.Del(ctx, l.key).Err())
}

// message is hop i of the record keyed by key (a TaskResult like the workers send).
func message(key string, i int) (eventbus.Message, error) {
	return eventbus.NewMessage(eventsv1.TopicTaskComplete, key, &eventsv1.TaskResult{
		RunId: key, NodeId: "n" + strconv.Itoa(i), Attempt: 1, WorkerId: "floor", Output: []byte("{}"),
	})
}

// Latency runs hops sequential hops of one record — consume, HSET, publish
// the next, commit — after a first record that waits for the group join,
// and returns the time between consecutive consumes, in ms, one per hop.
func (l *Loop) Latency(ctx context.Context, hops int) ([]float64, error) {
	if err := l.publish(ctx, "lat", 0); err != nil {
		return nil, err
	}
	gaps := make([]float64, 0, hops)
	var last time.Time
	for i := 0; i <= hops; i++ {
		fctx, cancel := context.WithTimeout(ctx, joinTimeout)
		msgs, err := l.cons.Fetch(fctx, 1)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("floor latency hop %d: %w", i, err)
		}
		now := time.Now()
		if i > 0 {
			gaps = append(gaps, float64(now.Sub(last).Microseconds())/1000)
		}
		last = now
		if err := l.hop(ctx, msgs, i < hops); err != nil {
			return nil, fmt.Errorf("floor latency hop %d: %w", i, err)
		}
	}
	return gaps, nil
}

// hop stores one field per message, publishes each message's next hop
// (when next) and commits the messages.
func (l *Loop) hop(ctx context.Context, msgs []eventbus.Message, next bool) error {
	ctx, cancel := context.WithTimeout(ctx, ioTimeout)
	defer cancel()
	pipe := l.rdb.Pipeline()
	out := make([]eventbus.Message, 0, len(msgs))
	for _, m := range msgs {
		pipe.HSet(ctx, l.key, string(m.Key), record)
		if next {
			n, err := message(string(m.Key), int(m.Offset)+1)
			if err != nil {
				return err
			}
			out = append(out, n)
		}
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("hset %d fields: %w", len(msgs), err)
	}
	if err := l.prod.Publish(ctx, out...); err != nil {
		return err
	}
	return l.cons.Commit(ctx, msgs...)
}

// publish sends hop i of the record keyed by key.
func (l *Loop) publish(ctx context.Context, key string, i int) error {
	m, err := message(key, i)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, ioTimeout)
	defer cancel()
	return l.prod.Publish(ctx, m)
}
