package eventbus_test

import (
	"context"
	"testing"
	"time"

	"github.com/braidhq/braid/pkg/eventbus"
	"github.com/braidhq/braid/pkg/eventbus/eventbustest"
	"github.com/braidhq/braid/pkg/testkit/testinfra"
	"github.com/braidhq/braid/proto-events/eventsv1"
	"github.com/stretchr/testify/require"
)

// TestConformance runs the event bus's contract (eventbustest) against
// this package on kfake over TCP. Each rule gets its own broker: one rule
// stops it, and an in-process kfake starts in milliseconds.
func TestConformance(t *testing.T) {
	eventbustest.RunConformance(t, func(t *testing.T) eventbustest.Harness {
		k := testinfra.StartKafka(t)
		cfg := eventbus.Config{Brokers: []string{k.Addr}, TopicPrefix: testinfra.UniqueName(t, "t") + "."}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		require.NoError(t, eventbus.EnsureTopics(ctx, cfg, eventsv1.TopicTaskComplete))
		p, err := eventbus.NewProducer(cfg)
		require.NoError(t, err)
		t.Cleanup(func() { _ = p.Close() })
		return eventbustest.Harness{
			Publisher:  p,
			Topic:      eventsv1.TopicTaskComplete,
			StopBroker: k.Stop,
			NewConsumer: func(t *testing.T, group string, topics ...string) eventbustest.Consumer {
				c, err := eventbus.NewConsumer(t.Context(), cfg, group, topics...)
				require.NoError(t, err)
				t.Cleanup(func() { _ = c.Close() })
				return c
			},
		}
	})
}
