package eventbus

import (
	"context"
	"testing"

	"github.com/braidhq/braid/pkg/testkit/testinfra"
	"github.com/braidhq/braid/proto-events/eventsv1"
)

// BenchmarkPublishOne measures a synchronous one-record Publish against
// kfake (fsync per write): about one round trip, no batch timer.
func BenchmarkPublishOne(b *testing.B) { benchPublish(b, 1) }

// BenchmarkPublishTenOneKey measures a Publish of ten records with one key:
// one produce request holding all ten.
func BenchmarkPublishTenOneKey(b *testing.B) { benchPublish(b, 10) }

func benchPublish(b *testing.B, n int) {
	k := testinfra.StartKafka(b)
	cfg := Config{Brokers: []string{k.Addr}, TopicPrefix: testinfra.UniqueName(b, "t") + "."}
	ctx := context.Background()
	if err := EnsureTopics(ctx, cfg, eventsv1.TopicTaskComplete); err != nil {
		b.Fatal(err)
	}
	p, err := NewProducer(cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	msgs := make([]Message, n)
	for i := range msgs {
		msgs[i], err = NewMessage(eventsv1.TopicTaskComplete, "run-1", &eventsv1.TaskResult{RunId: "run-1", Attempt: int32(i)})
		if err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		if err := p.Publish(ctx, msgs...); err != nil {
			b.Fatal(err)
		}
	}
}
